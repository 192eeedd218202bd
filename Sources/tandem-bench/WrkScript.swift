/// A wrk Lua script that POSTs a JSON body built per request and checks every response body.
///
/// Each wrk thread gets an `id` (1, 2, ...) and counts its requests in `n`, so `bodyFormat`
/// (a Lua `string.format` pattern) can make every request unique, e.g. a fresh recordName.
/// `response()` counts as bad every response whose status is not 200, whose body lacks
/// `expect`, or whose body holds `serverErrorCode` (CloudKit's per-item errors come back with
/// status 200); `done()` prints `TANDEM_BAD <count>` and `TANDEM_SAMPLE <first bad body>`.
struct WrkScript {
    var path: String
    var headers: [(String, String)]
    /// A `string.format` pattern; `%d` placeholders are filled from `formatArguments`.
    var bodyFormat: String
    /// Lua expressions over `id` (thread number) and `n` (request number in the thread).
    var formatArguments: [String]
    /// Text every good response body contains.
    var expect: String
    /// `POST` with the body, or `GET` (the body pattern is then ignored; with `formatArguments`,
    /// `path` is the `string.format` pattern instead, a literal `%` in it written `%%`).
    var method = "POST"

    var lua: String {
        let headerTable = headers.map { "[ \(quoted($0.0)) ] = \(quoted($0.1))" }.joined(separator: ", ")
        let arguments = formatArguments.isEmpty ? "" : ", " + formatArguments.joined(separator: ", ")
        return """
            -- Written by tandem-bench for one wrk run.
            local path = \(quoted(path))
            local headers = { \(headerTable) }
            local pattern = \(quoted(bodyFormat))
            local expect = \(quoted(expect))
            local threads = {}
            local next_id = 1

            function setup(thread)
              thread:set("id", next_id)
              next_id = next_id + 1
              table.insert(threads, thread)
            end

            function init(args)
              n = 0
              bad = 0
              sample = ""
            end

            function request()
              n = n + 1
              \(method == "GET" ? "return wrk.format(\"GET\", \(formatArguments.isEmpty ? "path" : "string.format(path\(arguments))"), headers)" : "return wrk.format(\"POST\", path, headers, string.format(pattern\(arguments)))")
            end

            function response(status, hdrs, body)
              if status ~= 200 or not string.find(body, expect, 1, true)
                  or string.find(body, "serverErrorCode", 1, true) then
                bad = bad + 1
                if sample == "" then sample = string.sub(body, 1, 400) end
              end
            end

            function done(summary, latency, requests)
              local total = 0
              local first = ""
              for _, t in ipairs(threads) do
                total = total + t:get("bad")
                local s = t:get("sample")
                if first == "" and s ~= nil then first = s end
              end
              io.write(string.format("TANDEM_BAD %d\\n", total))
              if first ~= "" then io.write("TANDEM_SAMPLE " .. (string.gsub(first, "\\n", " ")) .. "\\n") end
            end

            """
    }

    /// A Lua long string, which needs no escaping as long as the closing bracket is absent.
    /// (As a table key it needs blanks inside the brackets: `[[[` would open a long string.)
    private func quoted(_ text: String) -> String {
        var level = 0
        while text.contains("]" + String(repeating: "=", count: level) + "]") { level += 1 }
        let equals = String(repeating: "=", count: level)
        return "[\(equals)[\(text)]\(equals)]"
    }
}
