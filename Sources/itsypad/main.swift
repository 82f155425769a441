#if canImport(Glibc)
import Glibc
#endif
import ItsypadKit

exit(Itsypad.main(CommandLine.arguments))
