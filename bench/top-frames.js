// Reads a V8 .cpuprofile and lists the functions with the most self time, and the same grouped by file/package.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where a frame lives, shortened: a package name, a dist/ file, or node's own module. */
function place(url) {
  if (!url) return '(native)';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const inModules = path.lastIndexOf('/node_modules/');
  if (inModules !== -1) {
    const parts = path.slice(inModules + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const inDist = path.lastIndexOf('/dist/');
  if (inDist !== -1) return path.slice(inDist + 1);
  return path.replace(/^.*\/bench\//, 'bench/');
}

/**
 * @param {string} file path of a .cpuprofile
 * @param {number} [limit]
 * @returns {{ frames: Array<{ name: string, share: number }>, places: Array<{ name: string, share: number }>, idleShare: number }}
 *   shares are of the non-idle samples
 */
export function topFrames(file, limit = 15) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byFrame = new Map();
  const byPlace = new Map();
  let idle = 0;
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += hits;
      continue;
    }
    total += hits;
    const where = place(url);
    const name = `${functionName || '(anonymous)'} ${url ? `${where}:${lineNumber + 1}` : ''}`.trim();
    byFrame.set(name, (byFrame.get(name) ?? 0) + hits);
    const group = url ? where : functionName; // (garbage collector), (program), native builtins
    byPlace.set(group, (byPlace.get(group) ?? 0) + hits);
  }
  const rank = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, limit).map(([name, hits]) => ({ name, share: hits / total }));
  return { frames: rank(byFrame), places: rank(byPlace), idleShare: idle / (idle + total) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node bench/top-frames.js FILE.cpuprofile');
    process.exit(2);
  }
  const { frames, places, idleShare } = topFrames(file);
  console.log(`idle: ${(idleShare * 100).toFixed(1)} % of samples; shares below are of the busy samples`);
  for (const { name, share } of frames) console.log(`${(share * 100).toFixed(1).padStart(5)} %  ${name}`);
  console.log('by file / package:');
  for (const { name, share } of places) console.log(`${(share * 100).toFixed(1).padStart(5)} %  ${name}`);
}
