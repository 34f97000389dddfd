// CI's counting (.ci/lib.sh, which .ci/run sources), driven with fake steps: the closing line adds
// up tap's totals and failed steps, and just before it comes what failed, by step: the tap "not
// ok" lines and the failed commands, since the end of CI's output is all some readers keep.
import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { spawnChildSync } from '../../lib/index.js'
import { REPO_ROOT, tempDir } from '../helpers.js'

const LIB = path.join(REPO_ROOT, '.ci', 'lib.sh')

/** Runs `body` after sourcing .ci/lib.sh in bash (from a directory of its own); stdout, and the
 * temporary files lib.sh made, by the names it gave them. */
function drive(t: Test, body: string): { out: string; temps: string[] } {
  const dir = tempDir(t)
  const script = path.join(dir, 'ci.sh')
  fs.writeFileSync(script, `set -uo pipefail\ncd ${JSON.stringify(dir)}\nsource ${JSON.stringify(LIB)}\necho "$log $failures" >&2\n${body}\n`)
  const r = spawnChildSync({ file: 'bash', args: [script], stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', timeout: 60000 })
  t.equal(r.exitCode, 0, 'the driver ran', { stderr: r.stderr.toString() })
  return { out: r.stdout.toString(), temps: r.stderr.toString().trim().split(' ') }
}

t.test('the closing line comes after what failed, by step', async t => {
  const { out, temps } = drive(t, `
step "a passing step" true
printf '%s\\n' 'TAP version 14' '    not ok 2 - the assertion # time=3.5ms' '    ok 3 - another' 'not ok 1 - test/x.test.ts # time=120ms' '# { total: 3, pass: 1, fail: 2 }' | tee "$log"
count "a tap suite"
step "a failing step" sh -c 'echo "        not ok 4 - an inner assertion # time=1ms"; exit 2'
: >"$log"
count "a suite that crashed" 134
finish`)
  const lines = out.trimEnd().split('\n')
  t.same(lines.slice(-7), [
    '=== what failed, by step (the first 60 of 5 lines; each is in the output above)',
    '[a tap suite] not ok 2 - the assertion',
    '[a tap suite] not ok 1 - test/x.test.ts',
    '[a failing step] not ok 4 - an inner assertion',
    "[a failing step] exit status 2: sh -c echo \"        not ok 4 - an inner assertion # time=1ms\"; exit 2",
    '[a suite that crashed] exit status 134',
    '1 passed, 3 failed',
  ], 'the tap totals and the failed step add up; what failed is listed before the closing line', { out })
  t.ok(lines.includes('=== a passing step') && lines.includes('=== FAILED: sh -c echo "        not ok 4 - an inner assertion # time=1ms"; exit 2'), 'each step is announced, and a failure said where it happened')
  t.same(temps.filter(f => fs.existsSync(f)), [], 'the step log and the failure list are gone at exit')
})

t.test('with nothing failed, the closing line is all there is after the steps', async t => {
  const { out } = drive(t, `
step "a passing step" echo fine
printf '%s\\n' 'ok 1 - test/x.test.ts' '# { total: 5, pass: 5 }' | tee "$log"
count "a tap suite"
finish`)
  t.same(out.trimEnd().split('\n').slice(-3), ['ok 1 - test/x.test.ts', '# { total: 5, pass: 5 }', '5 passed, 0 failed'], 'no failure section', { out })
})

t.test('.ci/run counts with .ci/lib.sh and closes with its summary', async t => {
  const run = fs.readFileSync(path.join(REPO_ROOT, '.ci', 'run'), 'utf8')
  t.match(run, /^source \.ci\/lib\.sh$/m, 'it sources the counting')
  t.match(run, /\nfinish\n\[ "\$failed" -eq 0 \]\n$/, 'its last lines: the summary and closing line, then the exit status')
  t.notMatch(run, /echo "\$passed passed, \$failed failed"/, 'no closing line printed without the summary')
  t.notMatch(run, /^\s*count\s*$/m, 'every count names its step')
  t.notMatch(run, /^\s*count "[^"]*"\s*$/m, 'and is given its suite\'s exit status, so that a suite that crashed is listed')
})
