import Foundation

/// A figure from `/proc/PID/status` (`VmHWM:`, `VmRSS:`), in MB; 0 if there is none.
/// - Parameter pid: a process ID, or `"self"`.
public func procStatusMegabytes(_ field: String, pid: String = "self") -> Double {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
        let kb = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kb / 1024
}
