import Logging
import Mapping

/// Everything `pushbridge run` needs, from one YAML or JSON file plus `PUSHBRIDGE_*` environment
/// overrides (docs/configuration.md, schemas/config.schema.json). Load with
/// ``load(file:environment:)``. The initial values are the defaults; the key that sets each
/// field is declared in `ConfigSchema.keys`.
public struct PushbridgeConfig: Sendable, Equatable {
    public struct Kafka: Sendable, Equatable {
        public var brokers: [String] = []
        public var group = "pushbridge"
        /// `group.instance.id`: static membership, so a restart does not rebalance.
        public var instanceID: String?
        public var topics: [String] = []
        /// `range`, `roundrobin` or `cooperative-sticky`.
        public var assignmentStrategy = "cooperative-sticky"
        public var sessionTimeout: Duration = .seconds(45)
        /// librdkafka properties for the consumer and the producer (SASL, SSL, …).
        public var properties: [String: String] = [:]
        /// How each topic's values are read; a topic not named: `auto` (Schema Registry records
        /// told from JSON by their first byte).
        public var valueFormats: [String: ValueFormat] = [:]
    }

    /// The Schema Registry that Avro and Protobuf records' writer schemas come from.
    public struct SchemaRegistry: Sendable, Equatable {
        /// nil: none (Schema Registry records are dead-lettered as wrong_value_format).
        public var url: String?
        /// HTTP basic auth (Confluent Cloud: an API key and secret).
        public var username: String?
        public var password: String?
        /// PEM CAs to trust instead of the system's.
        public var caFile: String?
        public var requestTimeout: Duration = .seconds(10)

        /// ``url`` for the startup log: any password in it replaced by `<redacted>`.
        public var summary: String { url.map { EgressProxy.redacted($0) } ?? "none" }
    }

    public struct Retry: Sendable, Equatable {
        /// nil: transient failures are retried for as long as the budget allows.
        public var maxAttempts: Int?
        public var initialBackoff: Duration = .milliseconds(200)
        public var maxBackoff: Duration = .seconds(30)
        public var budget: Duration = .seconds(300)
        public var quotaPause: Duration = .seconds(60)
    }

    /// One of several Firebase projects (`fcm.projects`), e.g. a consumer app and a driver app.
    public struct Project: Sendable, Equatable {
        /// Its service-account JSON file (absolute).
        public var serviceAccountFile: String
        /// This worker's rate cap for it; nil: `fcm.max_sends_per_second`.
        public var maxSendsPerSecond: Double?
        /// Its send rate for the whole group; nil: `fcm.project_sends_per_second`.
        public var projectSendsPerSecond: Double?

        public init(serviceAccountFile: String, maxSendsPerSecond: Double? = nil, projectSendsPerSecond: Double? = nil) {
            self.serviceAccountFile = serviceAccountFile
            self.maxSendsPerSecond = maxSendsPerSecond
            self.projectSendsPerSecond = projectSendsPerSecond
        }
    }

    public struct FCM: Sendable, Equatable {
        /// A service-account JSON file; nil: `GOOGLE_APPLICATION_CREDENTIALS`. Not with ``projects``.
        public var serviceAccountFile: String?
        /// Several Firebase projects by the name mappings use (`project:`); empty: one project,
        /// from ``serviceAccountFile``.
        public var projects: [String: Project] = [:]
        /// The project of mappings that name none; nil: the only one of ``projects``, if one.
        public var defaultProject: String?
        public var endpoint = "https://fcm.googleapis.com"
        /// CAs to trust instead of the system's (PEM).
        public var caFile: String?
        public var validateOnly = false
        public var maxStreams = 100
        /// HTTP/2 connections at most; they open as sends in flight need streams.
        public var connections = 64
        public var maxSendsPerSecond: Double?
        /// The project's send rate for the whole group, split by partitions held.
        public var projectSendsPerSecond: Double?
        public var requestTimeout: Duration = .seconds(30)
        /// A connection with sends waiting that receives nothing this long is closed as dead.
        public var livenessTimeout: Duration = .seconds(10)
        /// `nghttp2` or `libcurl` (``HTTP2/HTTP2Client/Engine``); with a proxy, libcurl.
        public var httpEngine = "nghttp2"
        public var retry = Retry()
        /// The egress proxy's URL, `off`, or nil: none. Filled from `HTTPS_PROXY` (and the like)
        /// by the loader when neither the file nor `PUSHBRIDGE_FCM_PROXY` sets it.
        public var proxy: String?
        /// Hosts reached without the proxy; nil: none. Filled from `NO_PROXY` likewise.
        public var noProxy: [String]?
        /// Where ``proxy`` came from (`fcm.proxy`, `PUSHBRIDGE_FCM_PROXY`, `HTTPS_PROXY`, …).
        public var proxyOrigin: String?
    }

    public struct Topics: Sendable, Equatable {
        public var deadLetter = "pushbridge.dead-letter"
        public var tokenInvalidation = "pushbridge.token-invalidations"
        /// One record per push (docs/operations.md, *Outcome records*); nil: none written.
        public var outcomes: String?
    }

    /// What becomes of an event that is not sent (an unknown type, a user without devices):
    /// done without a record, or a dead-letter record.
    public enum SkipOrDeadLetter: String, Sendable, Equatable, CaseIterable {
        case skip
        case deadLetter = "dead-letter"
    }

    public struct Delivery: Sendable, Equatable {
        /// Four times ``maxSendsInFlight``: paused partitions resume at half, when as many events
        /// again still wait behind the sends, so the fetch a resume starts never leaves the sends
        /// short (smaller bounds cost events/s at long answer times; docs/configuration.md).
        public var maxEventsInFlight = 20_000
        /// Sends in flight at most: the ceiling of the limit that follows FCM's answer times.
        public var maxSendsInFlight = 5_000
        /// Half of ``maxEventsInFlight``: one partition alone can keep the sends full.
        public var partitionBuffer = 10_000
        public var commitInterval: Duration = .seconds(1)
        public var commitEveryEvents = 1_000
        public var offsetMap = true
        /// One Live Activity push in flight per activity, in offset order.
        public var orderActivities = true
        public var unknownEventTypes = SkipOrDeadLetter.skip
        public var shutdownTimeout: Duration = .seconds(30)
    }

    /// The device registry (`user` targets): a compacted topic materialized in a local store.
    public struct Registry: Sendable, Equatable {
        /// nil: no registry.
        public var topic: String?
        public var path = "/var/lib/pushbridge/registry.sqlite"
        public var noDevices = SkipOrDeadLetter.skip
        public var cacheMegabytes = 64
    }

    /// Per-user rules (docs/rules.md).
    public struct Rules: Sendable, Equatable {
        /// The IANA time zone of users whose record names none (or one this machine's tzdata
        /// does not know).
        public var defaultTimeZone = "UTC"
        /// What the source topic's records are keyed by (`rules.source.keyed_by`): `user` lets
        /// `cap` and `dedup` run on it directly, each partition a state partition.
        public var keyedBy = KeyedBy.none
        /// How the source's producers partition by key (`rules.source.partitioner`).
        public var partitioner: Partitioner?
        /// Where the state of caps and dedup is kept: `file` (SQLite at ``statePath``) or
        /// `memory`; restored from the changelog either way (docs/rules-state.md).
        public var stateStore = StateStore.file
        /// The local state of caps and dedup (SQLite), restored from the changelog.
        public var statePath = "/var/lib/pushbridge/rules.sqlite"
        /// The changelog of caps and dedup; nil: `pushbridge.<kafka.group>.rules-changelog`.
        public var changelogTopic: String?
        /// Re-key mode's topic of events keyed by subject; nil: `pushbridge.<kafka.group>.by-subject`.
        public var bySubjectTopic: String?

        public enum KeyedBy: String, Sendable, Equatable, CaseIterable {
            case none, user
        }

        public enum StateStore: String, Sendable, Equatable, CaseIterable {
            case file, memory
        }

        /// librdkafka's names of Kafka's key hashes (docs/rules.md says which producer uses which).
        public enum Partitioner: String, Sendable, Equatable, CaseIterable {
            case murmur2, consistent, fnv1a
        }

        /// ``changelogTopic``, or its default for `group`.
        public func changelog(group: String) -> String { changelogTopic ?? "pushbridge.\(group).rules-changelog" }

        /// ``bySubjectTopic``, or its default for `group`.
        public func bySubject(group: String) -> String { bySubjectTopic ?? "pushbridge.\(group).by-subject" }
    }

    /// Deferred pushes (docs/timers.md): the timer topic and its layout.
    public struct Timers: Sendable, Equatable {
        /// nil: `pushbridge.<kafka.group>.timers`.
        public var topic: String?
        public var levels = 18
        public var buckets = 6

        /// nil: `pushbridge.<kafka.group>.timer-cancels`.
        public var cancelsTopic: String?

        /// ``topic``, or its default for `group`.
        public func topic(group: String) -> String { topic ?? "pushbridge.\(group).timers" }

        /// ``cancelsTopic``, or its default for `group`.
        public func cancelTopic(group: String) -> String { cancelsTopic ?? "pushbridge.\(group).timer-cancels" }
    }

    public struct HTTP: Sendable, Equatable {
        /// Where `/metrics`, `/healthz` and `/readyz` listen; nil: off.
        public var listen: (host: String, port: Int)? = ("0.0.0.0", 9464)

        public static func == (a: HTTP, b: HTTP) -> Bool {
            a.listen?.host == b.listen?.host && a.listen?.port == b.listen?.port
        }
    }

    /// OpenTelemetry tracing: off without an endpoint.
    public struct Tracing: Sendable, Equatable {
        /// An OTLP/HTTP collector's base URL; nil: off.
        public var endpoint: String?
        public var sampleRatio = 0.01
        public var serviceName = "pushbridge"
        public var exportInterval: Duration = .seconds(5)
        public var caFile: String?

        /// For the startup log: off, or where spans go and how many are sampled.
        public var summary: String {
            guard let endpoint else { return "off" }
            return "\(EgressProxy.redacted(endpoint)) (sampling \(sampleRatio) of new traces)"
        }
    }

    public struct Log: Sendable, Equatable {
        public var level = Logger.Level.info
        public var format = LogFormat.json
        /// A failure that repeats is logged when it starts, counted this often, and ended after
        /// this long without it.
        public var summaryPeriod: Duration = .seconds(30)
    }

    public var kafka = Kafka()
    /// Mapping files or directories, absolute (resolved against the config file's directory).
    public var mappings: [String] = []
    public var fcm = FCM()
    public var topics = Topics()
    public var delivery = Delivery()
    public var registry = Registry()
    public var rules = Rules()
    public var timers = Timers()
    public var schemaRegistry = SchemaRegistry()
    public var http = HTTP()
    public var log = Log()
    public var tracing = Tracing()

    public init() {}
}
