/// The Firebase projects one deployment sends for (the config's `fcm.projects`), each with its
/// own ``FCMClient``: its own connections, access tokens, rate cap and quota pause, so one app
/// over its quota does not hold another's pushes.
///
/// Projects are known by a name (`consumer`, `driver`) that mappings use; FCM knows them by
/// their project ID, from the service account. A one-project deployment has one, the default.
///
/// ```swift
/// let projects = try FCMProjects(["consumer": consumerClient, "driver": driverClient], default: "consumer")
/// let result = await projects.send(message, project: "driver")
/// ```
public final class FCMProjects: Sendable {
    /// The clients by name.
    public let clients: [String: FCMClient]
    /// The project of messages that name none; nil: each message must name one.
    public let defaultName: String?
    /// The names, sorted: for iterating in a stable order.
    public let names: [String]

    /// - Throws: when `defaultName` is not one of `clients`' names, or there are no clients.
    public init(_ clients: [String: FCMClient], default defaultName: String?) throws(FCMProjectsError) {
        guard !clients.isEmpty else { throw FCMProjectsError(message: "no FCM project configured") }
        if let defaultName, clients[defaultName] == nil {
            throw FCMProjectsError(
                message: "the default project \"\(defaultName)\" is not one of fcm.projects (\(clients.keys.sorted().joined(separator: ", ")))")
        }
        self.clients = clients
        self.defaultName = defaultName
        self.names = clients.keys.sorted()
    }

    /// One project, which is the default: what a config with `fcm.service_account` sends with.
    public convenience init(single client: FCMClient, name: String = FCMProjects.singleName) {
        try! self.init([name: client], default: name)  // one client, named as the default: cannot throw
    }

    /// The name of a one-project deployment's project.
    public static let singleName = "default"

    /// The client for `name` (nil: the default project), if there is one.
    public func client(_ name: String?) -> FCMClient? {
        if let name { return clients[name] }
        return defaultName.flatMap { clients[$0] }
    }

    /// Sends that may be in flight now, over every project.
    public var concurrencyLimit: Int {
        clients.values.reduce(0) { $0 + $1.concurrencyLimit }
    }

    /// Fetches each project's access token; the first refusal throws.
    public func warmUp() async throws {
        for name in names { try await clients[name]!.warmUp() }
    }

    public func shutdown() async {
        for name in names { await clients[name]!.shutdown() }
    }
}

/// A set of projects that cannot be used as configured.
public struct FCMProjectsError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}
