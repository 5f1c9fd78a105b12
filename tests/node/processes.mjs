// The processes of a command a node client cancels, read from /proc, so that the client
// can tell they ran before the cancellation and ended after it while the server still runs
// (tasks_client.mjs, tasks_2025_client.mjs).
import { readdirSync, readFileSync } from 'node:fs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Every process now, by pid: its parent and its command line.
const processes = () => {
  const found = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'latin1');
      // The parent is the second field after the command's name, which may hold spaces.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      found.set(Number(entry), { parent, cmdline });
    } catch {
      // ended meanwhile
    }
  }
  return found;
};

const withDescendants = (found, roots) => {
  const tree = new Set(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, { parent }] of found) {
      if (tree.has(parent) && !tree.has(pid)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  return tree;
};

// Waits until `condition()` is truthy, within `ms`; returns its value, or null.
export const waitFor = async (condition, ms = 10_000) => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = condition();
    if (value) return value;
    if (Date.now() > deadline) return null;
    await sleep(50);
  }
};

// The processes holding `marker` once they run a child (the command's `sleep`), with their
// descendants: `{ tree: [pid], found: Map(pid → {parent, cmdline}) }`, both empty when none
// came within the deadline.
export const markedTree = async (marker) => {
  const seen = await waitFor(() => {
    const now = processes();
    const holders = [...now].filter(([, p]) => p.cmdline.includes(marker)).map(([pid]) => pid);
    const tree = withDescendants(now, holders);
    return tree.size > holders.length ? { found: now, tree: [...tree] } : null;
  });
  return seen ?? { found: new Map(), tree: [] };
};

// Each process of the tree with its command line, its arguments joined by spaces.
export const described = ({ tree, found }) =>
  tree.map((pid) => ({ pid, cmdline: found.get(pid).cmdline.split('\0').join(' ') }));

// Whether each process of the tree is gone within the deadline (or, were its pid reused,
// runs another command).
export const ended = async ({ tree, found }) =>
  (await waitFor(() => {
    const now = processes();
    return !tree.some((pid) => now.get(pid)?.cmdline === found.get(pid).cmdline);
  })) === true;
