import Testing
import TandemCore

/// JSONValue and JSONObject: ordered objects, order-insensitive equality, exact accessors.
@Suite struct JSONValueTests {
    @Test func settingAnExistingKeyKeepsItsPosition() {
        var object: JSONObject = ["a": 1, "b": 2, "c": 3]
        object["b"] = "two"
        #expect(object.keys == ["a", "b", "c"])
        #expect(object["b"] == .string("two"))
    }

    @Test func settingNilRemovesTheKeyAndNewKeysAppend() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["a"] = nil
        object["z"] = .null
        #expect(object.keys == ["b", "z"])
        #expect(object["z"] == .null)
        #expect(object["a"] == nil)
        #expect(object.count == 2)
    }

    @Test func objectEqualityAndHashIgnoreKeyOrder() {
        let one: JSONObject = ["a": 1, "b": [1, 2]]
        let two: JSONObject = ["b": [1, 2], "a": 1]
        #expect(one == two)
        #expect(one.hashValue == two.hashValue)
        #expect(Set([JSONValue.object(one), .object(two)]).count == 1)
    }

    @Test func objectsDifferingInOneValueOrKeyAreNotEqual() {
        #expect((["a": 1] as JSONObject) != (["a": 2] as JSONObject))
        #expect((["a": 1] as JSONObject) != (["b": 1] as JSONObject))
        #expect((["a": 1] as JSONObject) != (["a": 1, "b": 1] as JSONObject))
    }

    @Test func arrayOrderMatters() {
        #expect(JSONValue.array([1, 2]) != .array([2, 1]))
    }

    @Test func integerAndDoubleAreDistinctValues() {
        #expect(JSONValue.int(1) != .double(1.0))
    }

    @Test(arguments: [
        (JSONValue.int(Int64.min), Int64?.some(Int64.min)),
        (.double(3.0), 3), (.double(-0.0), 0), (.double(3.5), nil), (.double(9.3e18), nil),
        (.double(-9.223372036854775808e18), Int64.min), (.double(9.223372036854775808e18), nil),
        (.double(.nan), nil), (.string("3"), nil), (.bool(true), nil),
    ])
    func int64ValueIsExactOrNil(_ value: JSONValue, _ expected: Int64?) {
        #expect(value.int64Value == expected)
    }

    @Test func doubleValueConvertsIntegers() {
        #expect(JSONValue.int(2).doubleValue == 2.0)
        #expect(JSONValue.double(2.5).doubleValue == 2.5)
        #expect(JSONValue.string("2.5").doubleValue == nil)
    }

    @Test(arguments: [
        (JSONValue.null, "null"), (.bool(false), "a boolean"), (.int(1), "a number"), (.double(1), "a number"),
        (.string(""), "a string"), (.array([]), "an array"), (.object(JSONObject()), "an object"),
    ])
    func kindNamesReadInErrorReasons(_ value: JSONValue, _ name: String) {
        #expect(value.kindName == name)
    }

    @Test func subscriptOnANonObjectIsNil() {
        #expect(JSONValue.array([1])["a"] == nil)
        #expect(JSONValue.string("a")["a"] == nil)
    }

    @Test func literalsBuildTheMatchingCases() {
        let value: JSONValue = ["s": "x", "i": 1, "d": 1.5, "b": true, "n": nil, "a": [1]]
        #expect(value["s"] == .string("x"))
        #expect(value["i"] == .int(1))
        #expect(value["d"] == .double(1.5))
        #expect(value["b"] == .bool(true))
        #expect(value["n"] == .null)
        #expect(value["a"] == .array([.int(1)]))
    }
}
