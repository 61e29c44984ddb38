#!/bin/sh
# Regenerates the Go bindings of the ERC-8004 registries:
#   contracts/  the Identity and Reputation Registry interfaces the committer
#               calls (ABI only: it deploys nothing)
#   testchain/  the test registries written to those interfaces, with their
#               bytecode, deployed on the in-process simulated chain
# solc comes from npm (solc-js, pinned below: the compiler as WebAssembly,
# no binary download); abigen is go-ethereum's, at the version in go.mod.
# Needs node/npm and go. Run from anywhere: go generate ./processors/erc8004/...
set -eu
SOLC_VERSION=0.8.37
here=$(cd "$(dirname "$0")" && pwd)
pkg=$(dirname "$here")
geth=$(cd "$pkg" && go list -m -f '{{.Version}}' github.com/ethereum/go-ethereum)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
npm install --silent --no-audit --no-fund --no-save --prefix "$work" "solc@$SOLC_VERSION" >/dev/null
mkdir "$work/out"
node "$here/compile.js" "$work/node_modules/solc" "$work/out" \
  "$pkg/contracts/IIdentityRegistry.sol" "$pkg/contracts/IReputationRegistry.sol" \
  "$pkg/testchain/IdentityRegistry.sol" "$pkg/testchain/ReputationRegistry.sol"
abigen() { go run "github.com/ethereum/go-ethereum/cmd/abigen@$geth" --v2 "$@"; }
abigen --abi "$work/out/IIdentityRegistry.abi" --pkg contracts --type IdentityRegistry --out "$pkg/contracts/identity.go"
abigen --abi "$work/out/IReputationRegistry.abi" --pkg contracts --type ReputationRegistry --out "$pkg/contracts/reputation.go"
abigen --abi "$work/out/IdentityRegistry.abi" --bin "$work/out/IdentityRegistry.bin" --pkg testchain --type IdentityRegistry --out "$pkg/testchain/identity.go"
abigen --abi "$work/out/ReputationRegistry.abi" --bin "$work/out/ReputationRegistry.bin" --pkg testchain --type ReputationRegistry --out "$pkg/testchain/reputation.go"
echo "regenerated with solc $SOLC_VERSION and abigen $geth" >&2
