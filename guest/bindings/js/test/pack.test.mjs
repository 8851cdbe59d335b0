// The README's way to depend on the package from another project: `npm pack` here, then `npm
// install` of the tarball in that project, which imports it by name and runs the component.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
const npm = (args, cwd) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8' });

test('a packed tarball installs into another project and admits by name', () => {
  const dir = mkdtempSync(join(tmpdir(), 'capacity-admission-pack-'));
  try {
    const { version } = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
    const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], here));
    const tarball = join(dir, packed[0].filename);
    assert.equal(packed[0].filename, `capacity-admission-${version}.tgz`);
    const project = join(dir, 'service');
    execFileSync('mkdir', [project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'service', private: true, type: 'module' }));
    npm(['install', '--prefer-offline', tarball], project);
    const installed = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    assert.match(installed.dependencies['capacity-admission'], /capacity-admission-.*\.tgz$/);
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
      import { resolveBudget, VERSION } from 'capacity-admission';
      const r = resolveBudget({ factor: 0.5, clusterBatches: 10, serviceBatches: 6, share: 3 });
      console.log(JSON.stringify({ VERSION, admit: r.admit, outcome: r.outcome }));`], { cwd: project, encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out), { VERSION: version, admit: 2, outcome: 'admit' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
