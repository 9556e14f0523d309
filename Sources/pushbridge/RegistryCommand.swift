import ArgumentParser
import DeviceRegistry
import Foundation
import Logging
import Operations
import Pipeline

/// `pushbridge registry`: a worker's device registry for support work: a user's devices as the
/// worker sees them, and how far its store is behind the registry topic.
struct RegistryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "registry",
        abstract: "Show users' devices in a worker's device registry, and how far it is behind its topic.",
        discussion: """
            Reads the store at registry.path (read-only, as the worker keeps it current): run it \
            where the worker runs (kubectl exec). Without users it prints the store's size and, \
            per partition of registry.topic, the offset the store has read to, the topic's end \
            and the lag. A user's devices print one per line: kind, identifier (cut to its last \
            6 characters unless --full), platform, app and labels, and the Live Activity \
            push-to-start types and activity token it has.

            Examples:
              pushbridge registry --config /etc/pushbridge/pushbridge.yaml
              pushbridge registry --config /etc/pushbridge/pushbridge.yaml user-42 user-43
            """)

    @Option(name: .long, help: "The worker's config file: registry.topic, registry.path and the brokers.")
    var config: String

    @Flag(name: .long, help: "Print device identifiers whole (they are credentials to a phone: careful where they go).")
    var full = false

    @Flag(name: .long, help: "Do not ask the brokers for the topic's end offsets (no lag).")
    var offline = false

    @Argument(help: "User IDs whose devices to print.")
    var users: [String] = []

    func run() async throws {
        let settings = try OffsetArguments.loadConfig(config)
        guard let topic = settings.registry.topic else {
            throw ValidationError("\(config) has no registry.topic: this deployment has no device registry")
        }
        LoggingSetup.bootstrap(level: .warning, format: .text)
        let store: RegistryStore
        do {
            store = try RegistryStore(path: settings.registry.path, readOnly: true)
        } catch {
            FileHandle.standardError.write(Data("pushbridge: cannot read the device registry at \(settings.registry.path): \(error)\n".utf8))
            throw ExitCode(2)
        }
        if users.isEmpty {
            print("registry \(topic) in \(store.path): \(store.userCount) users, \(store.deviceCount) devices")
            try await printLag(store: store, topic: topic, settings: settings)
            return
        }
        var missing = 0
        for user in users {
            let devices = try store.devices(of: user)
            if devices.isEmpty {
                missing += 1
                print("\(user): no devices\((try? store.contains(user)) == true ? " (registered with an empty list)" : "")")
                continue
            }
            print("\(user): \(devices.count) device\(devices.count == 1 ? "" : "s")")
            for d in devices {
                let id = full ? d.id : "…" + d.id.suffix(6)
                let labels = d.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                var line = "  \(d.kind.rawValue) \(id)  platform=\(d.platform ?? "-") app=\(d.app ?? "-")\(labels.isEmpty ? "" : " " + labels)"
                if !d.pushToStart.isEmpty { line += " push_to_start=" + d.pushToStart.keys.sorted().joined(separator: ",") }
                if d.liveActivityToken != nil { line += " live_activity_token" }
                print(line)
            }
        }
        if !offline { try await printLag(store: store, topic: topic, settings: settings) }
        if missing == users.count { throw ExitCode(1) }
    }

    /// Per partition: the store's next offset, the topic's end, the lag.
    private func printLag(store: RegistryStore, topic: String, settings: PushbridgeConfig) async throws {
        guard !offline else { return }
        let lags = try await RegistryFollower.lag(
            topic: topic, store: store, bootstrapServers: settings.kafka.brokers, properties: settings.kafka.properties)
        print("partition  read-to  end  lag")
        for p in lags { print("\(p.partition)  \(p.next.map(String.init) ?? "-")  \(p.end)  \(p.lag)") }
        print("lag: \(lags.reduce(0) { $0 + $1.lag }) records")
    }
}
