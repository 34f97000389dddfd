// bench/RESULTS.md is written by three scripts: scripts/bench/run.mjs (npm run bench) writes the
// document and carries over the sections the other two own, "## Soak" (scripts/soak.mjs --results)
// and "## Async API at scale" (scripts/bench/scale.mjs --results), each of which replaces only its
// own section. scripts/readme.mjs reads the figures the README quotes from all of them.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const RESULTS_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/RESULTS.md')

/** The headings of the sections written by scripts other than run.mjs, in the order they are kept. */
export const CARRIED_SECTIONS = ['Soak', 'Async API at scale']

/** The text of `## heading` in `doc`, up to the next `## ` heading; null when there is none. */
export function sectionOf(doc, heading) {
  const at = doc.search(new RegExp(`^## ${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'))
  if (at < 0) return null
  const next = doc.slice(at + 1).search(/^## /m)
  return doc.slice(at, next < 0 ? undefined : at + 1 + next).trimEnd() + '\n'
}

/** Replaces (or appends) `## heading` in `file` with `section`, which starts with that heading. */
export function writeSection(file, heading, section) {
  const doc = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''
  const old = sectionOf(doc, heading)
  const text = section.trimEnd() + '\n'
  let next
  if (old === null) {
    next = (doc === '' ? '' : doc.replace(/\n*$/, '\n\n')) + text
  } else {
    const at = doc.indexOf(old.trimEnd())
    const rest = doc.slice(at + old.trimEnd().length).replace(/^\n*/, '')
    next = doc.slice(0, at) + text + (rest === '' ? '' : '\n' + rest)
  }
  const tmp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(tmp, next)
  fs.renameSync(tmp, file)
}

/** The sections of `file` that run.mjs does not write, to go after what it does. */
export function carriedSections(file) {
  let doc
  try { doc = fs.readFileSync(file, 'utf8') } catch { return '' }
  return CARRIED_SECTIONS.map(h => sectionOf(doc, h)).filter(s => s !== null).map(s => '\n' + s).join('')
}
