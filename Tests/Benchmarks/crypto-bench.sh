#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# crypto-bench.sh: throughput of itsypad's own XChaCha20-Poly1305 and record
# cipher (release build), with OpenSSL's assembly ChaCha20-Poly1305 measured in
# the same run for reference.
#
#   Target: sealing and opening 1 MiB messages each run at >= 200 MiB/s.
#   Reported: throughput at 64 B, 1 KiB, 16 KiB and 1 MiB; the CPU time of
#   writing (encoding) and reading (decoding) a tab record file with 1 KiB of
#   content, plain and sealed, per record and for 10,000 records.
#
# Usage: Tests/Benchmarks/crypto-bench.sh
# Environment:
#   CRYPTO_BENCH  the benchmark binary (default: <repo>/.build/release/crypto-bench); never built here
#   SECONDS_PER   seconds per measurement (default 2)
#   BENCH_OUT     directory to keep raw.tsv and summary.txt in (default: none)
# Exit status: 0 when the target passes, 1 when it fails, 2 on a setup error.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CRYPTO_BENCH=${CRYPTO_BENCH:-$repo_root/.build/release/crypto-bench}
SECONDS_PER=${SECONDS_PER:-2}
TARGET_MIBS=200

BENCH_NAME=crypto-bench
# shellcheck source=common.sh
source "$repo_root/Tests/Benchmarks/common.sh"

if [[ ! -x $CRYPTO_BENCH ]]; then
    cat >&2 <<MSG
$BENCH_NAME: no benchmark binary at $CRYPTO_BENCH
Build it first (this script builds nothing):
    cd $repo_root && swift build -c release --static-swift-stdlib --product crypto-bench
or point CRYPTO_BENCH at a binary.
MSG
    exit 2
fi
make_work

step "itsypad XChaCha20-Poly1305 and record cipher ($SECONDS_PER s per measurement)"
"$CRYPTO_BENCH" "$SECONDS_PER" > "$results/raw.tsv" || die "crypto-bench failed"

openssl_mibs=""
if command -v openssl >/dev/null; then
    step "OpenSSL ChaCha20-Poly1305, 16 KiB messages (reference)"
    bytes_per_second=$(openssl speed -mr -seconds "$SECONDS_PER" -bytes 16384 -evp chacha20-poly1305 2>/dev/null \
        | awk -F: '/^\+F:/ { print $4 }')
    [[ -n $bytes_per_second ]] && openssl_mibs=$(awk -v b="$bytes_per_second" 'BEGIN { printf "%d", b / 1048576 }')
fi

status=0
verdicts=""
for operation in seal open; do
    mibs=$(awk -F'\t' -v name="xchacha20-poly1305 $operation" '$1 == name && $2 == 1048576 { print $3 }' "$results/raw.tsv")
    [[ -n $mibs ]] || die "no 1 MiB $operation measurement in the output"
    if (( mibs >= TARGET_MIBS )); then verdict=PASS; else verdict=FAIL; status=1; fi
    verdicts+=$(printf '%s 1 MiB: %s MiB/s (target >= %s)  %s' "$operation" "$mibs" "$TARGET_MIBS" "$verdict")$'\n'
done

{
    printf '%-32s %10s %10s %14s\n' measurement bytes "MiB/s" "per call"
    awk -F'\t' '{ printf "%-32s %10s %10s %11.2f us\n", $1, $2, $3, 1e6 / $4 }' "$results/raw.tsv"
    if [[ -n $openssl_mibs ]]; then printf '%-32s %10s %10s\n' "openssl chacha20-poly1305" 16384 "$openssl_mibs"; fi
    echo
    awk -F'\t' '
        /^record (write|read), plain/  { split($1, name, ","); plain[name[1]] = $4 }
        /^record (write|read), sealed/ { split($1, name, ","); sealed[name[1]] = $4 }
        END {
            for (operation in plain)
                printf "%s of 10,000 tab records: %.0f ms plain, %.0f ms sealed (%.2fx)\n", operation,
                    10000 * 1000 / plain[operation], 10000 * 1000 / sealed[operation], plain[operation] / sealed[operation]
        }' "$results/raw.tsv"
    echo
    printf '%s' "$verdicts"
} | tee "$results/summary.txt"
exit "$status"
