#!/usr/bin/env node
// node scripts/huge-output.mjs: the full-size check of maxBuffer: Infinity (not part of npm test:
// it needs ~5 GiB of free memory and ~20 s).
//
// `head -c 4402341478 /dev/zero` (more than buffer.constants.MAX_LENGTH, 4 GiB on Node 20) is run
// through spawnChildSync, spawnChild and startChild with maxBuffer: Infinity, each in a node
// process of its own (test/reliability/hostile/fixtures/max-buffer.mjs), so that a crash is
// reported rather than taking this script down. The contract: the result is truncated
// (stdoutTruncated: true, stdout.length === MAX_LENGTH), or the call throws a RangeError
// (ERR_OUT_OF_RANGE) up front; the process never crashes.
//
// Exit status: 0 all good, 1 a contract failure, 2 cannot run here (not enough memory).
import { spawnSync } from 'node:child_process'
import { constants } from 'node:buffer'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const FIXTURE = path.join(ROOT, 'test', 'reliability', 'hostile', 'fixtures', 'max-buffer.mjs')
const BYTES = 4402341478
const NEEDED = constants.MAX_LENGTH + 1024 * 1024 * 1024

const available = Number(/MemAvailable:\s+(\d+) kB/.exec(fs.readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) * 1024
if (available < NEEDED) {
  console.log(`huge-output: needs ${(NEEDED / 2 ** 30).toFixed(1)} GiB of available memory, ${(available / 2 ** 30).toFixed(1)} GiB here: not run`)
  process.exit(2)
}

let failures = 0
for (const api of ['sync', 'async', 'start']) {
  const started = Date.now()
  const r = spawnSync(process.execPath, [FIXTURE, String(BYTES), api, 'Infinity'], {
    cwd: ROOT, encoding: 'utf8', timeout: 180000, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024,
  })
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  const problems = []
  if (r.error) problems.push(`could not run: ${r.error.message}`)
  if (r.signal) problems.push(`the process was killed by ${r.signal}`)
  else if (r.status !== 0) problems.push(`the process exited ${r.status}`)
  for (const marker of ['terminate called', 'FATAL ERROR', 'double free', 'free(): ', 'AddressSanitizer']) {
    if (r.stderr?.includes(marker)) problems.push(`stderr has '${marker}'`)
  }
  let row = null
  try { row = JSON.parse(r.stdout.trim().split('\n').pop()).rows[0] } catch { problems.push('no report printed') }
  let verdict = ''
  if (row) {
    if (row.error) {
      if (row.error.name === 'RangeError' && row.error.code === 'ERR_OUT_OF_RANGE') verdict = `rejected up front: ${row.error.message}`
      else problems.push(`threw ${row.error.name} (${row.error.code}): ${row.error.message}`)
    } else {
      const res = row.result
      verdict = `exit ${res.exitCode}, stdout ${res.length} bytes, stdoutTruncated ${res.stdoutTruncated}`
      if (!res.stdoutTruncated) problems.push('stdoutTruncated is false')
      if (res.length !== constants.MAX_LENGTH) problems.push(`stdout.length ${res.length} !== MAX_LENGTH ${constants.MAX_LENGTH}`)
      if (res.exitCode !== 0 || res.spawnError) problems.push(`the child did not exit 0 (${JSON.stringify(res)})`)
      if (api === 'start' && row.streamed !== BYTES) problems.push(`the stream saw ${row.streamed} bytes, not all ${BYTES}`)
    }
  }
  if (problems.length) failures++
  console.log(`${problems.length ? 'FAIL' : 'ok  '} ${api.padEnd(5)} ${seconds} s  ${verdict}${problems.length ? `\n       ${problems.join('\n       ')}` : ''}`)
  if (problems.length && r.stderr) console.log(`       stderr: ${r.stderr.trim().split('\n').slice(0, 3).join(' | ')}`)
}
process.exit(failures ? 1 : 0)
