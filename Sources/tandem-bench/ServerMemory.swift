/// A server process's resident memory: right after start-up, and its peak (VmHWM) after the load.
struct ServerMemory {
    var label: String
    var idle: Int
    var peak: Int
}
