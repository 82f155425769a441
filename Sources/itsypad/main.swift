import ItsypadCLI

#if canImport(Glibc)
import Glibc
#endif

/// mallopt(3): Glibc's module map does not import malloc.h.
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32

// Blocks of 4 MiB and more (a large clip's text and its log line) are mapped, and unmapped when
// freed. glibc's own threshold rises after the first such block is freed; the next ones then come
// from the heap, where a freed block that the next does not fit stays resident beside it.
private let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
_ = glibcMallopt(mmapThreshold, 4 << 20)

exit(Itsypad.main(CommandLine.arguments))
