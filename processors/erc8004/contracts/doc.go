// Package contracts holds the Go bindings (abigen --v2) of the ERC-8004
// Identity and Reputation Registry interfaces the committer calls, generated
// from the Solidity interfaces beside them; gen.sh regenerates them (and the
// test registries of ../testchain) with solc-js from npm.
package contracts

//go:generate ./gen.sh
