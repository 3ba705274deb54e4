// The README and docs/*.md hold together on a clone: every relative link names a file that exists and
// every #anchor a heading of that file (as GitHub makes anchors), and nothing points at documents a
// clone does not have. No database.
import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dir, '..');
const DOCUMENTS = [
  join(ROOT, 'README.md'),
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name)),
];

/** Lines outside fenced code blocks, with inline code spans blanked (neither holds links or headings). */
function proseLines(text: string): { line: string; number: number }[] {
  const lines: { line: string; number: number }[] = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) lines.push({ line: line.replace(/`[^`]*`/g, '``'), number: index + 1 });
  });
  return lines;
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to '-', repeats numbered. */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\- _]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

type Link = { from: string; line: number; target: string };

function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  for (const { line, number } of proseLines(readFileSync(file, 'utf8'))) {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: — not ours to check
      links.push({ from: relative(ROOT, file), line: number, target });
    }
  }
  return links;
}

/** Why a link does not resolve, or null when it does. */
function brokenReason(link: Link): string | null {
  const [path, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? join(ROOT, link.from) : resolve(dirname(join(ROOT, link.from)), decodeURIComponent(path));
  if (!existsSync(file)) return `no file ${relative(ROOT, file)}`;
  if (anchor === undefined) return null;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `#${anchor} on a file that is not Markdown`;
  return headingAnchors(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor).toLowerCase())
    ? null
    : `no heading #${anchor} in ${relative(ROOT, file)}`;
}

describe('README.md and docs/', () => {
  test('the README and at least the reference files exist', () => {
    expect(DOCUMENTS.map((file) => relative(ROOT, file))).toEqual(
      expect.arrayContaining(['README.md', 'docs/api.md', 'docs/operating.md', 'docs/development.md']),
    );
  });

  test('every relative link and #anchor resolves', () => {
    const links = DOCUMENTS.flatMap(relativeLinks);
    expect(links.length).toBeGreaterThan(50);
    const broken = links.flatMap((link) => {
      const reason = brokenReason(link);
      return reason ? [`${link.from}:${link.line} (${link.target}): ${reason}`] : [];
    });
    expect(broken).toEqual([]);
  });

  test('no document cites what a clone does not have', () => {
    const forbidden = [/\.\.\/shared/, /\bSPEC\b/, /§/, /\bthe issue\b/i];
    const found = DOCUMENTS.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          forbidden.some((pattern) => pattern.test(line)) ? [`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(found).toEqual([]);
  });

  test('source comments that cite docs/ name files that exist', () => {
    const cited = ['src', 'test', 'bench', 'scripts'].flatMap((folder) =>
      [...new Bun.Glob('**/*.{ts,tsx}').scanSync(join(ROOT, folder))].flatMap((file) =>
        [...readFileSync(join(ROOT, folder, file), 'utf8').matchAll(/\bdocs\/([\w-]+\.md)/g)].map((match) => ({
          from: `${folder}/${file}`,
          doc: match[1]!,
        })),
      ),
    );
    expect(cited.length).toBeGreaterThan(50);
    expect(cited.filter(({ doc }) => !existsSync(join(ROOT, 'docs', doc))).map(({ from, doc }) => `${from}: docs/${doc}`)).toEqual([]);
  });

  test('the README is a page a newcomer reads in five minutes (at most 300 lines)', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
  });
});

describe('GitHub anchors', () => {
  test('are lowercase, without punctuation, with spaces as hyphens and repeats numbered', () => {
    const anchors = headingAnchors(
      '# The API\n## Backtests: how good is it?\n### `revintel backup`\n## Settings\n```\n# not a heading\n```\n## Settings\n',
    );
    expect([...anchors]).toEqual(['the-api', 'backtests-how-good-is-it', 'revintel-backup', 'settings', 'settings-1']);
  });
});
