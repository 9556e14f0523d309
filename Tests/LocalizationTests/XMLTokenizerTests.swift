import Localization
import Testing

@Suite("XML tokenizer")
struct XMLTokenizerTests {
    @Test("elements, attributes, text, CDATA, comments, PIs and DOCTYPE, with lines")
    func tokens() throws {
        let xml = """
            <?xml version="1.0" encoding="utf-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "x.dtd">
            <!-- a comment -->
            <r a="1" b='two &amp; &quot;three&quot;'>
              text &lt;&gt;&apos;&#65;&#x42;&#x1F600;<![CDATA[<b>raw & kept</b>]]><e/>
            </r>
            """
        let tokens = try XMLTokenizer.tokenize(Array(xml.utf8))
        #expect(tokens[0] == XMLToken(kind: .processingInstruction(target: "xml", content: "version=\"1.0\" encoding=\"utf-8\""), line: 1))
        #expect(tokens[1].line == 1)  // the newline after the PI is text on line 1
        guard case .doctype(let d) = tokens[2].kind else {
            Issue.record("no DOCTYPE: \(tokens[2])")
            return
        }
        #expect(d.hasPrefix("<!DOCTYPE plist"))
        #expect(tokens.contains(XMLToken(kind: .comment(" a comment "), line: 3)))
        #expect(
            tokens.contains(
                XMLToken(
                    kind: .startTag(
                        name: "r",
                        attributes: [
                            XMLAttribute(name: "a", value: "1"),
                            XMLAttribute(name: "b", value: "two & \"three\""),
                        ],
                        selfClosing: false), line: 4)))
        #expect(tokens.contains(XMLToken(kind: .text("\n  text <>'AB😀"), line: 4)))
        #expect(tokens.contains(XMLToken(kind: .cdata("<b>raw & kept</b>"), line: 5)))
        #expect(tokens.contains(XMLToken(kind: .startTag(name: "e", attributes: [], selfClosing: true), line: 5)))
        #expect(tokens.last == XMLToken(kind: .endTag(name: "r"), line: 6))
    }

    @Test(
        "malformed input fails with the line",
        arguments: [
            ("<r>\n\n<a>x</b></r>", 3, "</b> does not match <a> opened at line 3"),
            ("<r>\n  Tom &amp Jerry\n</r>", 2, "& must start an entity"),
            ("<r>&nbsp;</r>", 1, "unknown entity &nbsp;"),
            ("<r>\n<!-- never closed\n</r>", 2, "unterminated comment"),
            ("<r a=1/>", 1, "must be quoted"),
            ("<r>\n<s>\n</r>", 3, "</r> does not match <s>"),
            ("<r/>\n<q/>", 2, "a second root element"),
            ("text", 1, "text outside the root element"),
        ])
    func errors(xml: String, line: Int, message: String) {
        #expect {
            _ = try XMLElement.parseDocument(Array(xml.utf8))
        } throws: { error in
            guard let e = error as? XMLSyntaxError else { return false }
            return e.line == line && e.message.contains(message)
        }
    }

    @Test("hostile nesting is refused, not a stack overflow")
    func depth() {
        let xml = String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000)
        #expect(throws: XMLSyntaxError(line: 1, message: "elements nested more than 256 deep")) {
            try XMLElement.parseDocument(Array(xml.utf8))
        }
    }

    @Test("text content drops markup and keeps CDATA")
    func textContent() throws {
        let root = try XMLElement.parseDocument(Array(#"<s>Hi, <xliff:g id="n">%1$s</xliff:g> <b>and</b> <![CDATA[<i>more</i>]]></s>"#.utf8))
        #expect(root.textContent == "Hi, %1$s and <i>more</i>")
        #expect(root.elements.map(\.name) == ["xliff:g", "b"])
        #expect(root.elements[0].attribute("id") == "n")
    }
}
