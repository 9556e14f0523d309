import Foundation

/// A figure from `/proc/PID/status` (`VmHWM:`, `VmRSS:`), in MB; 0 if there is none.
/// - Parameter pid: a process ID, or `"self"`.
public func procStatusMegabytes(_ field: String, pid: String = "self") -> Double {
    (procStatusNumber(field, pid: pid) ?? 0) / 1024
}

/// The number on a `/proc/PID/status` line (`VmRSS:` in kB, `Threads:` a count); nil if there is
/// none. The name is followed by a tab, a size by spaces too.
/// - Parameter pid: a process ID, or `"self"`.
public func procStatusNumber(_ field: String, pid: String = "self") -> Double? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) })
    else { return nil }
    return Double(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "")
}

/// User + system CPU seconds a process has used so far (`/proc/PID/stat` fields 14 and 15); 0 if
/// it is gone.
public func procCPUSeconds(pid: String = "self") -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return 0 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // fields[0] is the state (field 3); utime and stime are fields 14 and 15.
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// A process's children now (`/proc/PID/task/PID/children`).
public func procChildren(pid: String) -> [String] {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8) else { return [] }
    return text.split(separator: " ").map(String.init)
}

/// The whole machine's busy and total CPU time so far, in clock ticks (`/proc/stat`'s `cpu` line;
/// idle and iowait are not busy): busy ÷ total over an interval is how saturated it was.
public func machineCPUTicks() -> (busy: Double, total: Double) {
    guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
        let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
    else { return (0, 0) }
    let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard ticks.count >= 5 else { return (0, 0) }
    let total = ticks.reduce(0, +)
    return (total - ticks[3] - ticks[4], total)
}

/// CPU seconds so far of each of a process's threads, summed by thread name (`comm`): where a
/// process spends its CPU, e.g. its libcurl thread against its pool threads.
public func procThreadCPUSeconds(pid: String) -> [String: Double] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    var byName: [String: Double] = [:]
    for tid in tasks {
        let name =
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
        byName[name, default: 0] += procCPUSeconds(pid: "\(pid)/task/\(tid)")
    }
    return byName
}

/// Where a process's threads wait, for a test that found it hung: each thread's name, state and
/// kernel wait channel (`/proc/PID/task/TID/{comm,stat,wchan}`), then every thread's stack from
/// `gdb -batch -ex "thread apply all bt"` if gdb is installed (`.ci/run` installs it).
public func procThreadStacks(pid: pid_t) -> String {
    let tasks = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }
    func read(_ tid: String, _ file: String) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/\(file)", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
    }
    var lines = tasks.map { tid -> String in
        let stat = read(tid, "stat")
        let state = stat.lastIndex(of: ")").map { stat[$0...].dropFirst(2).prefix(1) } ?? "?"
        return "  \(tid) \(read(tid, "comm")) state \(state) wchan \(read(tid, "wchan"))"
    }
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb"),
        let gdb = try? ChildProcess.run("/usr/bin/gdb", ["-p", "\(pid)", "-batch", "-ex", "thread apply all bt"], timeout: .seconds(60))
    {
        lines.append(gdb.output)
    }
    return lines.joined(separator: "\n")
}
