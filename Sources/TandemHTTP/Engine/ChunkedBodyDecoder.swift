/// Decodes a `transfer-encoding: chunked` request body incrementally (RFC 9112 §7.1).
///
/// libwebsockets 4.1 does not de-chunk request bodies on the server side: it hands the raw
/// bytes to `LWS_CALLBACK_HTTP_BODY`, so the framing is removed here. Chunk extensions and
/// trailer fields are skipped; a bare LF is accepted where CRLF is expected.
struct ChunkedBodyDecoder {
    enum Outcome: Equatable {
        /// The body is not complete yet.
        case needMore
        /// The terminating zero-size chunk and trailers have been read; `consumed` bytes of the
        /// last input belonged to the body.
        case complete(consumed: Int)
        /// The framing is broken.
        case malformed
        /// The decoded body would exceed the limit.
        case tooLarge
    }

    private enum State {
        case size, sizeExtension, sizeLF, data, dataCR, dataLF, trailerStart, trailerLine, trailerLF, finalLF, done
    }

    private var state = State.size
    private var chunkRemaining = 0
    private var sawDigit = false

    /// Feeds raw bytes, appending decoded ones to `body`, which may not grow beyond `limit`.
    mutating func feed(_ input: UnsafeRawBufferPointer, into body: inout [UInt8], limit: Int) -> Outcome {
        var index = 0
        let count = input.count
        while index < count {
            if state == .data {
                let take = min(chunkRemaining, count - index)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[index..<(index + take)]))
                index += take
                chunkRemaining -= take
                if chunkRemaining == 0 { state = .dataCR }
                continue
            }
            let byte = input[index]
            index += 1
            switch state {
            case .size:
                if let digit = Self.hexValue(byte) {
                    sawDigit = true
                    chunkRemaining = chunkRemaining &* 16 &+ digit
                    if chunkRemaining > limit || chunkRemaining < 0 { return .tooLarge }
                } else if !sawDigit {
                    return .malformed
                } else if byte == UInt8(ascii: ";") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                    state = .sizeExtension
                } else if byte == UInt8(ascii: "\r") {
                    state = .sizeLF
                } else if byte == UInt8(ascii: "\n") {
                    if let outcome = endOfSizeLine(bodyCount: body.count, limit: limit) { return outcome }
                } else {
                    return .malformed
                }
            case .sizeExtension:
                if byte == UInt8(ascii: "\r") {
                    state = .sizeLF
                } else if byte == UInt8(ascii: "\n") {
                    if let outcome = endOfSizeLine(bodyCount: body.count, limit: limit) { return outcome }
                }
            case .sizeLF:
                guard byte == UInt8(ascii: "\n") else { return .malformed }
                if let outcome = endOfSizeLine(bodyCount: body.count, limit: limit) { return outcome }
            case .dataCR:
                if byte == UInt8(ascii: "\r") {
                    state = .dataLF
                } else if byte == UInt8(ascii: "\n") {
                    startNextChunk()
                } else {
                    return .malformed
                }
            case .dataLF:
                guard byte == UInt8(ascii: "\n") else { return .malformed }
                startNextChunk()
            case .trailerStart:
                if byte == UInt8(ascii: "\r") {
                    state = .finalLF
                } else if byte == UInt8(ascii: "\n") {
                    state = .done
                    return .complete(consumed: index)
                } else {
                    state = .trailerLine
                }
            case .trailerLine:
                if byte == UInt8(ascii: "\r") {
                    state = .trailerLF
                } else if byte == UInt8(ascii: "\n") {
                    state = .trailerStart
                }
            case .trailerLF:
                guard byte == UInt8(ascii: "\n") else { return .malformed }
                state = .trailerStart
            case .finalLF:
                guard byte == UInt8(ascii: "\n") else { return .malformed }
                state = .done
                return .complete(consumed: index)
            case .done:
                return .complete(consumed: index - 1)
            case .data:
                break
            }
        }
        return state == .done ? .complete(consumed: count) : .needMore
    }

    private mutating func endOfSizeLine(bodyCount: Int, limit: Int) -> Outcome? {
        if chunkRemaining == 0 {
            state = .trailerStart
            return nil
        }
        if bodyCount + chunkRemaining > limit { return .tooLarge }
        state = .data
        return nil
    }

    private mutating func startNextChunk() {
        state = .size
        chunkRemaining = 0
        sawDigit = false
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}
