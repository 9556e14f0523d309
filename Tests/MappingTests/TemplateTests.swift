import Testing

@testable import Mapping

@Suite("Byte templates render exactly what the JSON tree renders")
struct TemplateTests {
    static let mappings = """
        version: 1
        events:
          all.options:
            target: {topic: {field: /topic}}
            title: {key: t, args: [{field: /a}, "literal", {field: /n, default: "0"}]}
            body: {key: b, args: [{field: /quote}]}
            ttl: 0
            priority: normal
            collapse_key: {from: event_id}
            android: {channel_id: c, tag: {field: /a}, color: {field: /color}, image: {field: /img}}
            apns: {badge: {field: /n}, thread_id: {field: /a}, mutable_content: true}
            data: {x: {field: /a}, y: fixed, "ü": {field: /n}}
            analytics_label: lbl
          fan.out:
            target: {tokens: {field: /tokens}}
            body: {key: k, args: [{field: /a}]}
          literal.token:
            target: {token: "static-token"}
            body: {key: k}
            platforms: [ios]
          condition:
            target: {condition: "'a' in topics"}
            silent: true
            data: {v: {field: /a}}
          platform.blocks:
            target: {fid: {field: /fid}}
            platforms: [android, ios, web]
            title: {field: /headline}
            body: {key: b, args: [{field: /a}], fallback: {field: /headline}}
            badge: {field: /n}
            replace_id: {field: /a}
            data: {x: {field: /a}}
            android: {event_time: {field: /at}, visibility: private, ticker: {field: /a}, priority: high, data: {y: {field: /a}}}
            apns: {priority: low, ttl: 10m, collapse_id: {field: /fid}, image: {field: /img}}
            web: {link: {field: /url}, topic: {field: /wt}, ttl: 1h, urgency: low, icon: "https://x.example/i.png"}
        """

    static let events = [
        ##"{"type":"all.options","id":"e1","topic":"/topics/news","a":"Zoë \"q\" \n","n":4,"quote":"<>&","color":"#00ff00","img":"https://x/y.png"}"##,
        ##"{"type":"all.options","id":"e2","topic":"news","a":"x","color":"#00FF00","img":"i"}"##,
        ##"{"type":"fan.out","id":"e3","tokens":["t1","t2","t3"],"a":1.5}"##,
        ##"{"type":"literal.token","id":"e4"}"##,
        ##"{"type":"condition","id":"e5","a":true}"##,
        // failures must match too
        ##"{"type":"all.options","id":"e6","topic":"bad topic","a":"x","color":"#00ff00","img":"i"}"##,
        ##"{"type":"all.options","id":"e7","topic":"t","a":"x","color":"red","img":"i"}"##,
        ##"{"type":"all.options","id":"e8","topic":"t","a":"x","color":"#000000","img":"i","n":"many"}"##,
        ##"{"type":"fan.out","id":"e9","tokens":[],"a":1}"##,
        ##"{"type":"fan.out","id":"e10","tokens":["t"]}"##,
        ##"{"type":"platform.blocks","id":"e11","fid":"f1","headline":"Hi","a":"x","n":2,"at":"2027-01-15T07:59:30+01:00","img":"https://x/y.png","url":"https://x/a","wt":"a-1"}"##,
        ##"{"type":"platform.blocks","id":"e12","fid":"f1","headline":"Hi","a":"x","n":2,"at":-1000,"img":"https://x/y.png","url":"https://x/a","wt":"a-1"}"##,
        ##"{"type":"platform.blocks","id":"e13","fid":"f1","headline":"Hi","a":"x","n":-2,"at":0,"img":"https://x/y.png","url":"https://x/a","wt":"a-1"}"##,
        ##"{"type":"platform.blocks","id":"e14","fid":"f1","headline":"Hi","a":"x","n":2,"at":"yesterday","img":"https://x/y.png","url":"https://x/a","wt":"a-1"}"##,
        ##"{"type":"platform.blocks","id":"e15","fid":"f1","headline":"Hi","a":"x","n":2,"at":0,"img":"https://x/y.png","url":"http://x/a","wt":"a-1"}"##,
        ##"{"type":"platform.blocks","id":"e16","fid":"f1","headline":"Hi","a":"x","n":2,"at":0,"img":"https://x/y.png","url":"https://x/a","wt":"a topic"}"##,
    ]

    @Test("every mapping here compiles to a template", arguments: ["all.options", "fan.out", "literal.token", "condition", "platform.blocks"])
    func compiles(type: String) throws {
        let set = try load(Self.mappings)
        #expect(set.mappings[type]?.template != nil)
    }

    @Test("template and tree agree, byte for byte and failure for failure", arguments: events)
    func agree(json: String) throws {
        let set = try load(Self.mappings)
        let event = try set.eventFormat.decode(EventRecord(value: Array(json.utf8))).get()
        let mapping = try #require(set.mappings[event.type])
        let template = try #require(mapping.template)
        let viaTemplate: Result<[FCMMessage], MappingFailure> = Result { () throws(MappingFailure) in try template.render(event, now: 1_800_000_000) }
        let viaTree: Result<[FCMMessage], MappingFailure> = Result { () throws(MappingFailure) in try mapping.renderTree(event, now: 1_800_000_000) }
        switch (viaTemplate, viaTree) {
        case (.success(let a), .success(let b)):
            #expect(a.map { String(decoding: $0.encoded, as: UTF8.self) } == b.map { String(decoding: $0.encoded, as: UTF8.self) })
            #expect(a.map(\.target) == b.map(\.target))
        case (.failure, .failure(let b)):
            // The template fills holes in byte order; the failure reported is the tree's.
            #expect(mapping.render(event, now: 1_800_000_000) == .failure(b))
        default:
            Issue.record("template \(viaTemplate) vs tree \(viaTree)")
        }
    }

    @Test(
        "decoding only the fields mappings read renders what decoding everything renders",
        arguments: events + [
            ##"{"type":"fan.out","skipped":{"deep":[1,{"x":"é\u00e9"},null,true,-1.5e3]},"tokens":["a"],"a":"v"}"##,
            ##"{"specversion":"1.0","type":"fan.out","id":"c1","source":"s","data":{"tokens":["a","b"],"a":7,"b":[1]}}"##,
            ##"{"specversion":"1.0","type":"condition","id":"c2","source":"s","data":{"a":"x"},"data_base64":"eA=="}"##,
            ##"{"type":"nope","a":1}"##,
            ##"{"type":"condition","a":"unterminated}"##,
        ])
    func sparseDecoding(json: String) throws {
        let set = try load(Self.mappings)
        let record = EventRecord(value: Array(json.utf8))
        let sparse = set.render(record, now: 1_800_000_000)
        let full: Result<[FCMMessage], MappingFailure> = set.eventFormat.decode(record).flatMap { event in
            guard let mapping = set.mappings[event.type] else { return .failure(.unknownEventType(event.type)) }
            return Result { () throws(MappingFailure) in try mapping.renderTree(event, now: 1_800_000_000) }
        }
        #expect(sparse.map(\.messages) == full)
    }

    @Test("the example mappings all compile to templates, but Live Activities, which the tree renders")
    func examples() throws {
        let mappings = try exampleMappings().mappings.values
        #expect(mappings.allSatisfy { ($0.template != nil) == ($0.activity == nil) })
        #expect(mappings.contains { $0.activity != nil })
    }
}
