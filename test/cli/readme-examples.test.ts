// The README's `tileharness compile` examples, run as written: every line they show is what the
// command prints (stdout and stderr as a terminal interleaves them), but for the figures that vary
// from run to run (wall and CPU times, max RSS, ptxas's "Compile time"). The examples that need
// no file of the reader's are run: the built-in kernels, and the bad command lines. Object sizes had
// gone stale by some hundred bytes in four of them, unnoticed.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { spawnChildSync, splitCommand } from '../../lib/index.js'
import { REPO_ROOT, tempDir } from '../helpers.js'
import { MAIN } from './compile-helpers.js'
import { skipWithoutPtxas } from '../fixtures/cuda/helpers.js'

interface Example {
  line: number
  command: string
  expected: string[]
}

const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8').split('\n')

/** Each `$ tileharness compile ...` line of a fenced block, with the lines up to the next `$`. */
function examples(): Example[] {
  const out: Example[] = []
  let fenced = false
  for (let i = 0; i < README.length; i++) {
    if (README[i].startsWith('```')) {
      fenced = !fenced
      // The set-up section's first command is shown with its output alone, in its own block.
      if (fenced && README[i + 1]?.startsWith('vadd.sm_100.o: ')) out.push({ line: i + 2, command: 'tileharness compile', expected: outputFrom(i + 1) })
      continue
    }
    if (fenced && README[i].startsWith('$ ') && /^(\w+=\S+ )*tileharness compile/.test(README[i].slice(2))) {
      out.push({ line: i + 1, command: README[i].slice(2), expected: outputFrom(i + 1) })
    }
  }
  return out
}

function outputFrom(start: number): string[] {
  const lines: string[] = []
  for (let i = start; i < README.length && !README[i].startsWith('```') && !README[i].startsWith('$ '); i++) lines.push(README[i])
  return lines
}

/** Figures that differ from run to run. */
const varies = (line: string): boolean => / s wall, /.test(line) || /Compile time = /.test(line)

t.test("the README's compile examples print what it shows", skipWithoutPtxas, async (t) => {
  const all = examples()
  const runnable = all.filter((example) => !/\S+\.ptx\b/.test(example.command))
  t.ok(runnable.length >= 6, `found ${runnable.length} of the README's ${all.length} compile examples to run`)
  for (const example of runnable) {
    const dir = tempDir(t)
    const echoStatus = example.command.endsWith('; echo $?')
    const words = splitCommand(example.command.replace(/; echo \$\?$/, ''))
    const env: Record<string, string | undefined> = { ...process.env }
    while (/^\w+=/.test(words[0])) {
      const [name, ...value] = words.shift()!.split('=')
      env[name] = value.join('=')
    }
    t.equal(words.slice(0, 2).join(' '), 'tileharness compile', `README.md:${example.line} is a compile`)
    const r = spawnChildSync({ file: process.execPath, args: [MAIN, ...words.slice(1)], cwd: dir, env, stderr: 'stdout', timeout: 120000 })
    const printed = r.stdout.toString().split('\n')
    if (printed[printed.length - 1] === '') printed.pop()
    if (echoStatus) printed.push(String(r.exitCode))
    t.same(printed.filter((line) => !varies(line)), example.expected.filter((line) => !varies(line)), `README.md:${example.line}: ${example.command}`)
    t.equal(printed.filter(varies).length, example.expected.filter(varies).length, `README.md:${example.line}: as many timing lines`)
  }
})
