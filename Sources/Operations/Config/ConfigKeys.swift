import Logging

extension ConfigSchema {
    /// Every key, in the file's order (`--print-config` prints them so): the one place a key is
    /// added. Its default is the field's initial value in ``PushbridgeConfig``; the doc line is the
    /// JSON Schema's description; docs/configuration.md's table says more.
    static let keys: [Key] = [
        Key("kafka.brokers", \.kafka.brokers, .strings, required: true, "Bootstrap brokers, host:port."),
        Key("kafka.group", \.kafka.group, .string, "Consumer group (group.id) shared by all workers."),
        Key("kafka.instance_id", \.kafka.instanceID, .string, "group.instance.id: static membership, so a restart does not rebalance."),
        Key("kafka.topics", \.kafka.topics, .strings, required: true, "Topics to consume."),
        Key(
            "kafka.assignment_strategy", \.kafka.assignmentStrategy, .oneOf(["range", "roundrobin", "cooperative-sticky"]),
            "How the group's partitions are assigned to its members."),
        Key(
            "kafka.session_timeout_ms", \.kafka.sessionTimeout, .milliseconds(min: 1),
            "Consumer session timeout: a worker silent this long loses its partitions."),
        Key("kafka.properties", \.kafka.properties, .map, "librdkafka properties for the consumer and the producer (SASL, SSL, …)."),
        Key(
            "kafka.value_formats", \.kafka.valueFormats, .valueFormats,
            "How each topic's values are read, topic: auto | json | avro | protobuf. auto (any topic not named): Schema Registry records (magic byte 0) by their schema, the rest as JSON or CloudEvents; avro or protobuf dead-letter anything else."
        ),
        Key("mappings", \.mappings, .paths, required: true, "Mapping files or directories, relative to the config file."),
        Key("fcm.service_account", \.fcm.serviceAccountFile, .path, "Service-account JSON file; null: GOOGLE_APPLICATION_CREDENTIALS."),
        Key(
            "fcm.projects", \.fcm.projects, .projects,
            "Several Firebase projects (apps) by the name mappings choose them with (project:), each {service_account, max_sends_per_second, project_sends_per_second}, each with its own connections, access token, rate cap and quota pause. Not with service_account."
        ),
        Key("fcm.default_project", \.fcm.defaultProject, .string, "The project of mappings that name none; null: the only one of projects, if one."),
        Key("fcm.endpoint", \.fcm.endpoint, .string, "FCM's base URL."),
        Key("fcm.ca_file", \.fcm.caFile, .path, "PEM CAs to trust instead of the system's."),
        Key("fcm.validate_only", \.fcm.validateOnly, .bool, "FCM dry run: validated, not delivered."),
        Key("fcm.max_streams", \.fcm.maxStreams, .int(min: 1), "HTTP/2 streams per connection."),
        Key(
            "fcm.connections", \.fcm.connections, .int(min: 1),
            "HTTP/2 connections to FCM at most: opened as the sends in flight need streams (max_streams each), closed after 60 s idle, driven by one thread per CPU (at most 4)."
        ),
        Key("fcm.max_sends_per_second", \.fcm.maxSendsPerSecond, .number, "Rate limit for this worker; null: none."),
        Key(
            "fcm.project_sends_per_second", \.fcm.projectSendsPerSecond, .number,
            "The project's send rate for the whole consumer group (e.g. 10000 for FCM's default 600k/min), split across the members by the partitions each holds and updated at every rebalance; with max_sends_per_second too, the lower holds. null: no split."
        ),
        Key("fcm.request_timeout_ms", \.fcm.requestTimeout, .milliseconds(min: 1), "Time allowed for one attempt."),
        Key(
            "fcm.liveness_timeout_ms", \.fcm.livenessTimeout, .milliseconds(min: 0),
            "A connection to FCM or the token endpoint with sends waiting that receives nothing for this long is closed as dead and its sends go again at once on another, not counted against the retry budget; 0: off."
        ),
        Key(
            "fcm.http_engine", \.fcm.httpEngine, .oneOf(["nghttp2", "libcurl"]),
            "What drives the HTTP/2 connections to FCM and the token endpoint: nghttp2 (our own client over nghttp2 and OpenSSL: a turn's frames in one TLS record, far less CPU per send) or libcurl. With an egress proxy, libcurl."
        ),
        Key(
            "fcm.proxy", \.fcm.proxy, .proxy,
            "Egress proxy for FCM and the OAuth2 token endpoint, scheme://[user:password@]host:port (an http:// proxy tunnels with CONNECT), or off; null: HTTPS_PROXY (then ALL_PROXY) from the environment."
        ),
        Key(
            "fcm.no_proxy", \.fcm.noProxy, .strings,
            "Hosts reached without the proxy: a name and the names under it, an IP address or CIDR range, or *; null: NO_PROXY from the environment."
        ),
        Key(
            "fcm.retry.max_attempts", \.fcm.retry.maxAttempts, .int(min: 1),
            "Attempts in all, the first included; null: transient failures are retried for as long as budget_ms allows."),
        Key("fcm.retry.initial_backoff_ms", \.fcm.retry.initialBackoff, .milliseconds(min: 0), "First backoff ceiling."),
        Key("fcm.retry.max_backoff_ms", \.fcm.retry.maxBackoff, .milliseconds(min: 0), "Largest backoff ceiling."),
        Key(
            "fcm.retry.budget_ms", \.fcm.retry.budget, .milliseconds(min: 0),
            "No retry starts later than this after the first attempt, counting only time FCM was answering: an FCM outage holds events, it does not use up their budget. Then the event is dead-lettered as fcm_retries_exhausted."
        ),
        Key(
            "fcm.retry.quota_pause_ms", \.fcm.retry.quotaPause, .milliseconds(min: 0),
            "The project's QUOTA_EXCEEDED pauses all sends, and a topic's that topic, at least this long."),
        Key("topics.dead_letter", \.topics.deadLetter, .string, "Topic of poison events, with pushbridge-* headers."),
        Key("topics.token_invalidation", \.topics.tokenInvalidation, .string, "Topic of JSON records of dead tokens, for the backend to delete."),
        Key(
            "topics.outcomes", \.topics.outcomes, .string,
            "Topic of one JSON record per push (sent, withheld, dead-lettered, invalidated), for \"did user 42 get it?\"; none: not written."),
        Key("delivery.max_events_in_flight", \.delivery.maxEventsInFlight, .int(min: 1), "All partitions pause at this many events in flight."),
        Key(
            "delivery.max_sends_in_flight", \.delivery.maxSendsInFlight, .int(min: 1),
            "FCM requests waiting for an answer at most; below it, the limit follows FCM's answer times (Little's law)."),
        Key("delivery.partition_buffer", \.delivery.partitionBuffer, .int(min: 1), "One partition pauses at this many events in flight."),
        Key("delivery.commit_interval_ms", \.delivery.commitInterval, .milliseconds(min: 1), "Commit at least this often."),
        Key("delivery.commit_every_events", \.delivery.commitEveryEvents, .int(min: 1), "Commit after this many events finished."),
        Key("delivery.offset_map", \.delivery.offsetMap, .bool, "Write done offsets past the watermark into the commit metadata."),
        Key(
            "delivery.order_activities", \.delivery.orderActivities, .bool,
            "Send one Live Activity push per activity at a time, in offset order; a newer waiting update replaces an older one."),
        Key("delivery.unknown_event_types", \.delivery.unknownEventTypes, .cases, "An event type with no mapping: skipped or dead-lettered."),
        Key(
            "delivery.shutdown_timeout_ms", \.delivery.shutdownTimeout, .milliseconds(min: 0),
            "On SIGTERM, how long in-flight events may finish."),
        Key(
            "registry.topic", \.registry.topic, .string,
            "The device registry's compacted topic (keyed by user ID) that user targets look devices up in; null: no registry."),
        Key(
            "registry.path", \.registry.path, .path,
            "The registry's local store (SQLite), a snapshot kept with its offsets so a restart reads only what is new."),
        Key("registry.no_devices", \.registry.noDevices, .cases, "A user target whose user has no device: skip (done, counted) or dead-letter."),
        Key("registry.cache_mb", \.registry.cacheMegabytes, .int(min: 1), "The store's page cache in MiB; the rest stays on disk."),
        Key(
            "rules.default_time_zone", \.rules.defaultTimeZone, .string,
            "IANA time zone of users whose registry record names none (or one this machine's tzdata does not know): quiet hours are local times in it."
        ),
        Key(
            "rules.source.keyed_by", \.rules.keyedBy, .cases,
            "user: the topic's records are keyed by user ID (one topic), so cap and dedup decide in each partition's owner; none: their events are re-keyed by user into rules.by_subject_topic first."
        ),
        Key(
            "rules.source.partitioner", \.rules.partitioner, .partitioner,
            "How the topic's producers partition by key: murmur2 (Java, franz-go), consistent (librdkafka's default: confluent-kafka clients), fnv1a; records elsewhere are dead-lettered not_keyed_by_subject."
        ),
        Key(
            "rules.state_store", \.rules.stateStore, .cases,
            "file: the state of caps and dedup in SQLite at rules.state_path; memory: in the worker's memory (less CPU per capped push, more memory, no file for render --rules-store). Restored from the changelog either way."
        ),
        Key(
            "rules.state_path", \.rules.statePath, .path,
            "The local state of caps and dedup (SQLite), restored from the changelog topic when a partition is assigned."),
        Key(
            "rules.changelog_topic", \.rules.changelogTopic, .string,
            "The changelog of caps and dedup, as many partitions as the source topic, cleanup.policy=delete; null: pushbridge.<kafka.group>.rules-changelog."
        ),
        Key(
            "rules.by_subject_topic", \.rules.bySubjectTopic, .string,
            "With keyed_by: none, events of mappings with cap or dedup are re-keyed by user into this topic (as many partitions as the changelog) and decided by the group <kafka.group>.rules; null: pushbridge.<kafka.group>.by-subject."
        ),
        Key(
            "timers.topic", \.timers.topic, .string,
            "Where pushes with a later send_at wait: levels × buckets partitions, cleanup.policy=delete, retention ≥ 7 days (docs/timers.md); null: pushbridge.<kafka.group>.timers."
        ),
        Key(
            "timers.cancels_topic", \.timers.cancelsTopic, .string,
            "What pushbridge timers cancel writes and every timer engine follows from its start: any partitions, cleanup.policy=delete, retention ≥ 35 days; a worker without it cannot cancel (docs/timers.md); null: pushbridge.<kafka.group>.timer-cancels."
        ),
        Key(
            "timers.levels", \.timers.levels, .int(min: 1),
            "Delay levels of the timer topic: level k holds a record 2^k s (18: 1 s to 36 h). Changing it needs a new timer topic."),
        Key(
            "timers.buckets", \.timers.buckets, .int(min: 1),
            "Buckets of the timer topic: a user's timers are in one bucket's levels; the group <kafka.group>.timers shares buckets among workers."),
        Key(
            "schema_registry.url", \.schemaRegistry.url, .url,
            "A Confluent-compatible Schema Registry's base URL, where Avro and Protobuf records' writer schemas come from; null: none."),
        Key("schema_registry.username", \.schemaRegistry.username, .string, "HTTP basic auth user (Confluent Cloud: the API key)."),
        Key(
            "schema_registry.password", \.schemaRegistry.password, .secret,
            "HTTP basic auth password (Confluent Cloud: the API secret); best from PUSHBRIDGE_SCHEMA_REGISTRY_PASSWORD."),
        Key("schema_registry.ca_file", \.schemaRegistry.caFile, .path, "PEM CAs to trust for the registry instead of the system's."),
        Key(
            "schema_registry.request_timeout_ms", \.schemaRegistry.requestTimeout, .milliseconds(min: 1),
            "Time allowed for one request, at most 10000; a registry that cannot be reached is retried, holding its records, never dead-lettering them."
        ),
        Key("http.listen", \.http.listen, .listen, "host:port of /metrics /healthz /readyz, or off."),
        Key("log.level", \.log.level, .cases, "Lowest level logged."),
        Key("log.format", \.log.format, .cases, "json: one object per line; text: for people at a terminal."),
        Key(
            "log.summary_period_ms", \.log.summaryPeriod, .milliseconds(min: 1),
            "A failure that repeats (a broker down, FCM connections dying) is logged when it starts, counted this often while it lasts, and logged as ended after two periods without it."
        ),
        Key(
            "tracing.endpoint", \.tracing.endpoint, .url,
            "OpenTelemetry collector's OTLP/HTTP base URL (e.g. http://otel-collector:4318): sampled events' spans go to /v1/traces as JSON; null: tracing off."
        ),
        Key(
            "tracing.sample_ratio", \.tracing.sampleRatio, .ratio,
            "The share of traces that start here (events without a traceparent) that are sampled, 0 < r <= 1; an event whose traceparent is sampled, or not, follows it."
        ),
        Key("tracing.service_name", \.tracing.serviceName, .string, "service.name of the spans."),
        Key(
            "tracing.export_interval_ms", \.tracing.exportInterval, .milliseconds(min: 1),
            "Spans are sent at least this often (and whenever 512 wait)."),
        Key("tracing.ca_file", \.tracing.caFile, .path, "PEM CAs to trust for an https:// collector instead of the system's."),
    ]
}
