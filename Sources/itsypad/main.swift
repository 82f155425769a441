import ItsypadCLI

#if canImport(Glibc)
import Glibc
#endif

exit(Itsypad.main(CommandLine.arguments))
