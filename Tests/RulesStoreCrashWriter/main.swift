// rules-store-crash-writer PATH: applies batches to a rules store until it is killed, printing
// `applied N` (the next offset) after each commit. RulesStoreCrashTests kill it with SIGKILL
// mid-run and check that the file holds whole batches only.
//
// Batch i (offsets 500·i ..< 500·(i+1)) reserves notifications (i, 0..<250) of user "crash" at
// time i and acknowledges (i − 1, 0..<250), so after batch k − 1 the notifications of batches
// before k − 1 are sent and those of batch k − 1 reserved.
import Foundation
import Rules
import RulesStore

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: rules-store-crash-writer PATH\n".utf8))
    exit(2)
}
do {
    let store = try RulesStore(path: arguments[1])
    let subject = CapSubject(user: "crash", category: nil, mapping: "chat")
    var batch: Int64 = 0
    while true {
        var facts: [(offset: Int64, fact: Fact)] = []
        for j in 0..<250 {
            let n = NotificationID(high: UInt64(batch), low: UInt64(j))
            facts.append(
                (
                    0,
                    .notification(
                        NotificationFact(notification: n, status: .reserved, attempt: 1, at: batch, expires: .max, owner: "w", subject: subject))
                ))
        }
        for j in 0..<250 {
            let n = NotificationID(high: UInt64(bitPattern: batch - 1), low: UInt64(j))
            facts.append((0, .notification(NotificationFact(notification: n, status: .sent, attempt: 1, at: batch, expires: .max, owner: "w"))))
        }
        let first = batch * 500
        try store.apply(partition: 0, facts: facts.enumerated().map { (first + Int64($0.offset), $0.element.fact) })
        batch += 1
        FileHandle.standardOutput.write(Data("applied \(batch * 500)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("rules-store-crash-writer: \(error)\n".utf8))
    exit(1)
}
