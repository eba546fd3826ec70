// Whether dist/ is older than the sources it was built from, said in one line. The command line
// and `npm start` never build (a build is 15 s and half a gigabyte, and it swaps dist/ under
// anything running): they say so, naming `npm run build`, and run the build they have.
const { readdirSync, statSync } = require('node:fs');

/** The newest modification time under `path` (a file or a directory), or 0 when it is absent. */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(path)) {
    if (name === '__pycache__') continue;
    // Not path.join: normalizing each of a few hundred paths in code not yet optimized was most
    // of this walk's time (~5 ms of every run in a clone).
    latest = Math.max(latest, newest(`${path}/${name}`));
  }
  return latest;
}

/**
 * One line when `root`'s src/ changed after its last build (`dist/.built`); undefined when the
 * build is current, or when there is no src/ to compare with (an installed image).
 */
function staleBuildNote(root) {
  let built;
  try {
    built = statSync(`${root}/dist/.built`).mtimeMs;
  } catch {
    return undefined;
  }
  if (newest(`${root}/src`) <= built) return undefined;
  return `queue-ops: src/ changed after the last build; this runs the old one. Run \`npm run build\` in ${root} to use the change.\n`;
}

module.exports = { staleBuildNote };
