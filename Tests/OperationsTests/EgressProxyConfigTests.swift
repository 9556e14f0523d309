import Foundation
import Operations
import Testing

/// `fcm.proxy` and `fcm.no_proxy`: from the file, `PUSHBRIDGE_*`, or the environment's
/// `HTTPS_PROXY`/`NO_PROXY` family, checked, and printed without the password.
@Suite("Config: the egress proxy (fcm.proxy, fcm.no_proxy, HTTPS_PROXY, NO_PROXY)")
struct EgressProxyConfigTests {
    static func load(_ fcm: String = "", environment: [String: String]) throws -> PushbridgeConfig.FCM {
        let text = ConfigTests.minimal + (fcm.isEmpty ? "" : "fcm:\n" + fcm)
        return try PushbridgeConfig.load(file: try ConfigTests.file(text), environment: environment).fcm
    }

    @Test("unset, the proxy is the environment's, in libcurl's order: https_proxy, HTTPS_PROXY, all_proxy, ALL_PROXY")
    func fromEnvironment() throws {
        let all = [
            "https_proxy": "http://lower:3128", "HTTPS_PROXY": "http://upper:3128", "all_proxy": "http://all:3128",
            "ALL_PROXY": "http://ALL:3128",
        ]
        for (i, name) in ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"].enumerated() {
            var env = all
            for earlier in ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"].prefix(i) { env[earlier] = nil }
            let fcm = try Self.load(environment: env)
            #expect(fcm.proxy == all[name] && fcm.proxyURL == all[name] && fcm.proxyOrigin == name)
        }
        // An empty variable counts as unset; http_proxy is for http:// URLs, not FCM's.
        let fcm = try Self.load(environment: ["https_proxy": "", "HTTPS_PROXY": "proxy.corp:8080", "http_proxy": "http://no:1"])
        #expect(fcm.proxy == "http://proxy.corp:8080" && fcm.proxyOrigin == "HTTPS_PROXY")
        #expect(try Self.load(environment: ["http_proxy": "http://no:1"]).proxyURL == nil)
        let none = try Self.load(environment: [:])
        #expect(none.proxy == nil && none.proxyURL == nil && none.noProxy == nil && none.proxySummary == "none")
    }

    @Test("PUSHBRIDGE_FCM_PROXY over the file over HTTPS_PROXY; off ignores the environment")
    func precedence() throws {
        let env = ["HTTPS_PROXY": "http://env:3128"]
        let file = try Self.load("  proxy: http://file:3128\n", environment: env)
        #expect(file.proxyURL == "http://file:3128" && file.proxyOrigin == "fcm.proxy")
        let override = try Self.load("  proxy: http://file:3128\n", environment: env.merging(["PUSHBRIDGE_FCM_PROXY": "socks5h://sock:1080"]) { $1 })
        #expect(override.proxyURL == "socks5h://sock:1080" && override.proxyOrigin == "PUSHBRIDGE_FCM_PROXY")
        let off = try Self.load("  proxy: off\n", environment: env)
        #expect(off.proxy == "off" && off.proxyURL == nil && off.proxySummary == "none (fcm.proxy: off)")
    }

    @Test("no_proxy: the file's list, else PUSHBRIDGE_FCM_NO_PROXY, else no_proxy then NO_PROXY, blanks trimmed")
    func noProxy() throws {
        let env = ["HTTPS_PROXY": "http://p:3128", "NO_PROXY": " .corp.example , 10.0.0.0/8,,", "no_proxy": "lower.example"]
        #expect(try Self.load(environment: env).noProxy == ["lower.example"])
        #expect(try Self.load(environment: env.filter { $0.key != "no_proxy" }).noProxy == [".corp.example", "10.0.0.0/8"])
        #expect(try Self.load("  no_proxy: [fcm-mirror.internal]\n", environment: env).noProxy == ["fcm-mirror.internal"])
        let override = try Self.load(environment: env.merging(["PUSHBRIDGE_FCM_NO_PROXY": "a.example,b.example"]) { $1 })
        #expect(override.noProxy == ["a.example", "b.example"])
        #expect(override.proxySummary == "http://p:3128 (from HTTPS_PROXY), not for a.example,b.example")
    }

    @Test("proxy URLs are spelled out: the scheme added, a trailing slash dropped; IPv6 in brackets")
    func normalized() throws {
        let cases = [
            "proxy.corp:3128": "http://proxy.corp:3128", "HTTP://proxy.corp:3128/": "http://proxy.corp:3128",
            "https://u:p%40ss@proxy.corp:443": "https://u:p%40ss@proxy.corp:443", "http://[::1]:3128": "http://[::1]:3128",
        ]
        for (given, used) in cases {
            #expect(try Self.load("  proxy: \"\(given)\"\n", environment: [:]).proxyURL == used, "\(given)")
        }
    }

    @Test("a bad proxy URL is refused with its line, or the variable it came from, without its password")
    func refused() throws {
        for bad in [
            "http://proxy.corp", "ftp://proxy.corp:21", "http://proxy.corp:3128/path", "http://:3128", "http://proxy.corp:99999", "http://@proxy:1",
        ] {
            let problems = try ConfigTests.problems(ConfigTests.minimal + "fcm:\n  proxy: \"\(bad)\"\n")
            #expect(problems.count == 1 && problems[0].hasPrefix("line 6: fcm.proxy must be off or a proxy URL"), "\(bad): \(problems)")
        }
        let secret = "http://pb:hunter2@proxy.corp"  // no port
        let fromFile = try ConfigTests.problems(ConfigTests.minimal + "fcm:\n  proxy: \"\(secret)\"\n")
        #expect(fromFile.count == 1 && fromFile[0].contains("http://pb:<redacted>@proxy.corp") && !fromFile[0].contains("hunter2"), "\(fromFile)")
        let fromOverride = try ConfigTests.problems(ConfigTests.minimal, environment: ["PUSHBRIDGE_FCM_PROXY": secret])
        #expect(fromOverride.count == 1 && fromOverride[0].hasPrefix("PUSHBRIDGE_FCM_PROXY: fcm.proxy must be"), "\(fromOverride)")
        #expect(!fromOverride.joined().contains("hunter2"))
        let fromEnvironment = try ConfigTests.problems(ConfigTests.minimal, environment: ["HTTPS_PROXY": secret])
        #expect(
            fromEnvironment.count == 1 && fromEnvironment[0].hasPrefix("HTTPS_PROXY: fcm.proxy is unset, so the proxy is HTTPS_PROXY's"),
            "\(fromEnvironment)")
        #expect(fromEnvironment[0].contains("fcm.proxy: off") && !fromEnvironment[0].contains("hunter2"), "\(fromEnvironment)")
        // off ignores a bad HTTPS_PROXY
        #expect(try ConfigTests.problems(ConfigTests.minimal + "fcm:\n  proxy: off\n", environment: ["HTTPS_PROXY": secret]).isEmpty)
    }

    @Test("--print-config and the startup summary show the proxy in use, wherever it came from, password redacted")
    func printed() throws {
        let source = try ConfigTests.file(ConfigTests.minimal)
        let env = ["HTTPS_PROXY": "http://pb:hunter2@proxy.corp:3128", "NO_PROXY": "localhost,.internal"]
        let config = try PushbridgeConfig.load(file: source, environment: env)
        let printed = config.printed
        #expect(printed.contains("  proxy: \"http://pb:<redacted>@proxy.corp:3128\"\n"), "\(printed)")
        #expect(printed.contains("  no_proxy: [localhost, .internal]\n") && !printed.contains("hunter2"), "\(printed)")
        #expect(config.fcm.proxySummary == "http://pb:<redacted>@proxy.corp:3128 (from HTTPS_PROXY), not for localhost,.internal")
        // What it prints loads back as the same proxy (the password as printed) in any environment.
        let again = try PushbridgeConfig.load(file: try ConfigTests.file(printed), environment: ["HTTPS_PROXY": "http://other:1"])
        #expect(again.fcm.proxy == "http://pb:<redacted>@proxy.corp:3128" && again.fcm.noProxy == ["localhost", ".internal"])
        let direct = try PushbridgeConfig.load(file: try ConfigTests.file(ConfigTests.minimal + "fcm:\n  proxy: off\n"), environment: env).printed
        #expect(direct.contains("  proxy: off\n"), "\(direct)")
    }
}
