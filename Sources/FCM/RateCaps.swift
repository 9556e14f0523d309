/// The caps on an FCM client's send rate: the configured one (`fcm.max_sends_per_second`) and
/// this worker's share of the project's (`fcm.project_sends_per_second`). The lower one holds.
struct RateCaps {
    var configured: Double?
    var share: Double?

    var holding: Double? {
        switch (configured, share) {
        case (let a?, let b?): min(a, b)
        default: configured ?? share
        }
    }

    /// `rate` if it is a rate (above zero); nil (no cap) otherwise.
    static func positive(_ rate: Double?) -> Double? { rate.flatMap { $0 > 0 ? $0 : nil } }
}
