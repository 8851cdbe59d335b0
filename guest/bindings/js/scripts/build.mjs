// Builds the package's bindings with `jco transpile` from the components `cargo policies` built:
//   gen/admission/  capacity-admission-3.2.0.wasm (the admission-only world): what the package ships
//   gen/policy/     capacity-policy-1.0.0.wasm (the policy world): for the conformance tests only
// Each file's sha256 is checked against its manifest first. CAPACITY_POLICIES_DIR overrides
// where the components are (default: <repo>/target/policies).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '..');
const policies = process.env.CAPACITY_POLICIES_DIR ?? resolve(pkg, '../../../target/policies');
const jco = join(pkg, 'node_modules/.bin/jco');

const builds = [
  { file: 'capacity-admission-3.2.0.wasm', out: 'gen/admission', name: 'admission' },
  { file: 'capacity-policy-1.0.0.wasm', out: 'gen/policy', name: 'policy' },
];

for (const { file, out, name } of builds) {
  const wasm = join(policies, file);
  if (!existsSync(wasm)) {
    console.error(`build: ${wasm} is missing: run \`cargo policies\` in the repository first`);
    process.exit(1);
  }
  const manifest = JSON.parse(readFileSync(wasm.replace(/\.wasm$/, '.manifest.json'), 'utf8'));
  const digest = createHash('sha256').update(readFileSync(wasm)).digest('hex');
  if (digest !== manifest.sha256) {
    console.error(`build: ${wasm} has sha256 ${digest}, its manifest says ${manifest.sha256}`);
    process.exit(1);
  }
  rmSync(join(pkg, out), { recursive: true, force: true });
  // --strict: u32 arguments are range-checked instead of wrapped (jco's default is `>>> 0`).
  execFileSync(jco, ['transpile', wasm, '-o', join(pkg, out), '--name', name, '--strict', '--quiet'], {
    stdio: 'inherit',
  });
  console.log(`build: ${file} (sha256 ${digest.slice(0, 12)}) -> ${out}/`);
}
