import ArgumentParser
import Dates
import Foundation
import Mapping

/// Mapping files for the commands: loaded, with problems printed the way a terminal user reads them.
extension MappingFiles {
    /// Loads, or prints every error to stderr and exits 1. Warnings go to stderr too, unless
    /// the caller reports them itself (`run` logs them as JSON lines).
    /// `cap` and `dedup` load for every command: `run` decides them, `replay` hands them to the
    /// workers' rules stage (or sends them as told), `render` and `preview` say what applies.
    static func load(_ paths: [String], printingWarnings: Bool = true) throws -> MappingSet {
        do {
            let set = try MappingSet.load(files: try read(paths), statefulRules: true)
            if printingWarnings { printWarnings(set) }
            return set
        } catch let errors as MappingLoadErrors {
            printErrors(errors)
            throw ExitCode(1)
        }
    }

    static func printWarnings(_ set: MappingSet) {
        for w in set.warnings { FileHandle.standardError.write(Data("\(w)\n".utf8)) }
    }

    static func printErrors(_ errors: MappingLoadErrors) {
        for e in errors.errors { FileHandle.standardError.write(Data("\(e)\n".utf8)) }
        let n = errors.errors.count
        FileHandle.standardError.write(Data("\(n) error\(n == 1 ? "" : "s")\n".utf8))
    }
}

extension MappingSet {
    /// Renders `record` as it is sent: a push that waits (a later `send_at`, quiet hours'
    /// `outside: defer`) as at its due time, saying so on stderr (a worker writes it to the
    /// timer topic and renders it again then).
    func renderAsSent(
        _ record: EventRecord, now: Int64? = nil, maxAge: MaxAgeCheck, users: UserLookup?
    ) -> Result<Rendered, MappingFailure> {
        let first = render(record, now: now, maxAge: maxAge, users: users)
        guard case .success(let rendered) = first, let deferral = rendered.deferral else { return first }
        FileHandle.standardError.write(
            Data(
                "\(deferral.reason.rawValue): waits until \(RFC3339.format(milliseconds: deferral.due)) in the timer topic; rendered as sent then\n"
                    .utf8))
        return render(record, now: (deferral.due + 999) / 1000, maxAge: maxAge, users: users)
    }
}
