// Compiles the registry sources with solc-js (the npm "solc" package: the
// compiler as WebAssembly, no binary download) through its standard JSON
// interface, and writes NAME.abi and NAME.bin for abigen into OUT.
// Usage: node compile.js SOLC_MODULE_DIR OUT SOURCE.sol...
'use strict';
const fs = require('fs');
const path = require('path');
const [solcDir, out, ...files] = process.argv.slice(2);
const solc = require(path.resolve(solcDir));
const root = path.resolve(__dirname, '..');
const sources = {};
for (const f of files) {
  const key = path.relative(root, path.resolve(f)).split(path.sep).join('/');
  sources[key] = { content: fs.readFileSync(f, 'utf8') };
}
const input = {
  language: 'Solidity',
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'cancun',
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
function findImports(p) {
  const f = path.join(root, p);
  return fs.existsSync(f) ? { contents: fs.readFileSync(f, 'utf8') } : { error: 'not found: ' + p };
}
const res = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
let failed = false;
for (const e of res.errors || []) {
  process.stderr.write(e.formattedMessage + '\n');
  if (e.severity === 'error') failed = true;
}
if (failed) process.exit(1);
for (const [, contracts] of Object.entries(res.contracts)) {
  for (const [name, c] of Object.entries(contracts)) {
    fs.writeFileSync(path.join(out, name + '.abi'), JSON.stringify(c.abi));
    fs.writeFileSync(path.join(out, name + '.bin'), c.evm.bytecode.object);
  }
}
process.stderr.write('solc ' + solc.version() + ': ' + Object.keys(sources).join(', ') + '\n');
