import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('npm start on a server installed without development dependencies', () => {
  it('skips the configuration check before start, says so, and lets the server start', () => {
    const root = mkdtempSync(join(tmpdir(), 'prestart-'));
    try {
      // The script alone in a tree with no node_modules: tsx cannot be resolved, as after `npm ci --omit=dev`.
      mkdirSync(join(root, 'scripts'));
      copyFileSync('scripts/prestart.mjs', join(root, 'scripts', 'prestart.mjs'));
      const run = spawnSync(process.execPath, ['scripts/prestart.mjs'], { cwd: root, encoding: 'utf8' });
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('Configuration check before start skipped');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
