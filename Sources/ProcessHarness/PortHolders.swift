import Foundation

/// Who holds a loopback port, read from /proc: for the message when a test server finds its port
/// taken after all, so that a CI log says what took it.
public enum PortHolders {
    /// One line per socket on `port` (IPv4 and IPv6): its state and the processes that have it
    /// open, or "nothing" if none is left.
    public static func describe(port: Int) -> String {
        var sockets: [(state: String, inode: String)] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            // Read to the end: Foundation's String(contentsOfFile:) stops after the first 4 KB of a
            // /proc file (its size says 0), about 25 sockets.
            guard let data = FileHandle(forReadingAtPath: table)?.readDataToEndOfFile() else { continue }
            let text = String(decoding: data, as: UTF8.self)
            // "  sl  local_address rem_address   st ... uid  timeout inode"; addresses are HEXIP:HEXPORT.
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, let local = fields[1].split(separator: ":").last,
                    Int(local, radix: 16) == port
                else { continue }
                sockets.append((Self.stateNames[String(fields[3])] ?? String(fields[3]), String(fields[9])))
            }
        }
        guard !sockets.isEmpty else {
            return "no listening or connected socket on :\(port) now (one bound but not listening does not show in /proc/net/tcp)"
        }
        let owners = Self.owners(of: Set(sockets.map(\.inode)))
        return sockets.map { "\($0.state) on :\(port), held by \(owners[$0.inode] ?? "no process (kernel-owned)")" }
            .joined(separator: "\n")
    }

    /// The kernel's TCP states (include/net/tcp_states.h).
    private static let stateNames = [
        "01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2", "06": "TIME_WAIT",
        "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
    ]

    /// "pid N (command line)" for each process that has one of `inodes` open, by inode.
    private static func owners(of inodes: Set<String>) -> [String: String] {
        var found: [String: [String]] = [:]
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for pid in processes where Int(pid) != nil {
            guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { continue }
            for fd in fds {
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                    target.hasPrefix("socket:["), case let inode = String(target.dropFirst(8).dropLast()), inodes.contains(inode)
                else { continue }
                let command =
                    (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?
                    .replacingOccurrences(of: "\0", with: " ").prefix(200) ?? "?"
                found[inode, default: []].append("pid \(pid) (\(command.trimmingCharacters(in: .whitespaces)))")
            }
        }
        return found.mapValues { $0.joined(separator: ", ") }
    }
}
