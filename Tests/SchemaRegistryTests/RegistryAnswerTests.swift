import RecordDecoding
import Testing

@testable import SchemaRegistry

/// What each of the registry's answers means (Confluent's Schema Registry API reference:
/// `GET /schemas/ids/{id}`, `GET /subjects/{subject}/versions/{version}` and its error codes).
@Suite struct RegistryAnswerTests {
    private func answer(_ status: Int, _ body: String) -> RegistryAnswer { RegistryAnswer(status: status, body: Array(body.utf8)) }

    @Test func anAvroSchemaHasNoSchemaType() {
        #expect(answer(200, #"{"schema":"{\"type\":\"string\"}"}"#) == .schema(text: #"{"type":"string"}"#, kind: .avro, references: []))
    }

    @Test func protobufWithReferences() {
        let body =
            #"{"schema":"syntax = \"proto3\";","schemaType":"PROTOBUF","references":[{"name":"acme/money.proto","subject":"acme/money.proto","version":2}]}"#
        #expect(
            answer(200, body)
                == .schema(
                    text: #"syntax = "proto3";"#, kind: .protobuf,
                    references: [.init(name: "acme/money.proto", subject: "acme/money.proto", version: 2)]))
    }

    @Test func theRegistrysNotFoundIsTheRecordsFault() {
        #expect(answer(404, #"{"error_code":40403,"message":"Schema 7 not found"}"#) == .missing(errorCode: 40403, message: "Schema 7 not found"))
        #expect(
            answer(404, #"{"error_code":40401,"message":"Subject 'x' not found."}"#) == .missing(errorCode: 40401, message: "Subject 'x' not found."))
    }

    @Test func whatIsNotTheRegistrysWordIsRetried() {
        // A proxy's or a wrong path's 404 page is not the registry saying the schema is missing.
        guard case .retry = answer(404, "<html>Not Found</html>") else {
            Issue.record("a bare 404 must be retried")
            return
        }
        guard case .retry = answer(503, #"{"error_code":50003,"message":"Error while forwarding the request to the leader"}"#) else {
            Issue.record("5xx must be retried")
            return
        }
        guard case .retry = answer(401, #"{"error_code":401,"message":"Unauthorized"}"#) else {
            Issue.record("401 must be retried")
            return
        }
        guard case .retry = answer(429, "") else {
            Issue.record("429 must be retried")
            return
        }
        guard case .retry = answer(200, "not json") else {
            Issue.record("a 200 that is not the API must be retried")
            return
        }
    }

    @Test func aSchemaTypeWeDoNotReadIsUnusable() {
        guard case .unusable = answer(200, #"{"schema":"x","schemaType":"XML"}"#) else {
            Issue.record("an unknown schemaType")
            return
        }
        guard case .unusable = answer(200, #"{"schema":"x","references":[{"name":"a"}]}"#) else {
            Issue.record("a broken reference")
            return
        }
    }
}
