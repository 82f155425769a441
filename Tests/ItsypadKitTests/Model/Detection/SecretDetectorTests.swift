import Testing

@testable import ItsypadModel

/// Builds strings by repetition so the fixtures state their lengths
/// explicitly (and are not themselves mistaken for live credentials).
private func run(_ s: String, _ count: Int) -> String {
    String(repeating: s, count: count)
}

let secretPositives: [String] = [
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "key:\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\n-----END EC PRIVATE KEY-----",
    "AKIA" + "IOSFODNN7EXAMPLE",
    "aws_access_key_id = " + "AKIA" + run("Z", 12) + "2345",
    "export KEY=" + "ASIA" + run("Q7", 8),
    "ghp_" + run("a1B2", 9),
    "token: gho_" + run("Xy9", 12),
    "ghu_" + run("k", 36),
    "ghs_" + run("7", 36),
    "ghr_" + run("Ab", 18),
    "github_pat_" + run("11ABCDEFG", 3) + "_" + run("xYz", 20),
    "xoxb-" + "123456789012-1234567890123-" + run("aB3", 8),
    "SLACK_TOKEN=xoxp-" + run("9", 12) + "-" + run("Q", 24),
    "xoxa-2-" + run("abc", 5),
    "xoxr-" + run("r4", 10),
    "xoxs-" + run("s5", 10),
    "sk_live_" + run("4eC39HqLyjWDarjtT1zdp7dc", 1),
    "stripe: rk_live_" + run("Zz9", 10),
    "sk-" + run("aB3dE5", 8),
    "OPENAI_API_KEY=sk-proj-" + run("Ab_9-", 10),
    "AIza" + "SyD-" + run("x", 31),
    "maps key AIza" + run("B_c1-", 7) + ".",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
        + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
        + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "Authorization: Bearer eyJ" + run("a", 10) + "." + run("b", 10) + "." + run("c-_", 4),
    "npm_" + run("A1b2", 9),
    "//registry.npmjs.org/:_authToken=npm_" + run("Zz", 18),
    "(" + "ghp_" + run("Q", 36) + ")",
]

let secretNegatives: [String] = [
    "",
    "Never share your private key with anyone, not even support staff.",
    "The BEGIN PRIVATE KEY header marks a PEM file.",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "https://github.com/apple/swift/pull/12345?tab=files",
    "123e4567-e89b-12d3-a456-426614174000",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "AKIA1234",
    "AKIA" + run("A", 15),
    "AKIA" + run("A", 17),
    "AKIA" + run("A", 15) + "a",
    "XAKIA" + run("A", 16),
    "akia" + run("a", 16),
    "use sk-learn for this",
    "sk-" + run("a", 31),
    "pip install sk-learn-compatible-estimator-wrapper-tools",
    "SLACK_TOKEN=xoxb-token-goes-right-here",
    "task-" + run("a", 40),
    "ghp_" + run("a", 35),
    "ghp_" + run("a", 37),
    "ghx_" + run("a", 36),
    "github_pat_short",
    "We use xoxb- tokens for the bot.",
    "sk_live_short",
    "sk_test_" + run("a", 30),
    "AIza" + run("b", 34),
    "AIza" + run("b", 36),
    "npm_" + run("c", 35),
    "npm install left-pad",
    "eyJ" + run("a", 10) + "." + run("b", 10),
    "eyJ" + run("a", 10) + "." + run("b", 9) + "." + run("c", 10),
    "version 1.2.3 of eyJ.parser is out",
    "def hash_password(password: str) -> str:\n    return sha256(password.encode()).hexdigest()",
]

@Suite struct SecretDetectorTests {
    @Test(arguments: secretPositives)
    func flagsSecrets(_ text: String) {
        #expect(SecretDetector.looksSecret(text))
    }

    @Test(arguments: secretNegatives)
    func ignoresOrdinaryText(_ text: String) {
        #expect(!SecretDetector.looksSecret(text))
    }

    @Test func onlyTheFirstScanLimitBytesAreRead() {
        let token = "ghp_" + run("a", 36)
        let padding = run("x ", SecretDetector.scanLimit / 2)
        #expect(SecretDetector.looksSecret("note " + token))
        #expect(!SecretDetector.looksSecret(padding + token))
    }
}
