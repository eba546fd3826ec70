import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './cli-run.js';

/**
 * Why this process may not mount a tmpfs and set the immutable flag (it needs root, as in CI's
 * container); undefined when it may. The fault tests that fill a disk or make a file read-only
 * skip without both.
 */
export function whyNoMountAndChattr(): string | undefined {
  const dir = tempDir('probe');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir.dir], { stdio: 'ignore' });
    execFileSync('umount', [dir.dir], { stdio: 'ignore' });
    const file = join(dir.dir, 'f');
    closeSync(openSync(file, 'w'));
    execFileSync('chattr', ['+i', file], { stdio: 'ignore' });
    execFileSync('chattr', ['-i', file], { stdio: 'ignore' });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    dir.remove();
  }
}

/** Writes zeros into `file` until the filesystem refuses (ENOSPC). */
export function fillDisk(file: string) {
  const fd = openSync(file, 'w');
  const block = Buffer.alloc(4096);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}
