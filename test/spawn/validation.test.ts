// Bad input never crashes the process: each case throws a TypeError or RangeError with a `code`
// and a message naming the field.
import t from 'tap'
import { spawnChildSync, startChild, type ChildSpec } from '../../lib/index.js'
import { APIS, eachPath, revokedProxy } from '../helpers.js'

type Row = [string, unknown, 'TypeError' | 'RangeError', string, RegExp]

const rows: Row[] = [
  ['spec is null', null, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^spec must be an object/],
  ['spec is a string', 'ls', 'TypeError', 'ERR_INVALID_ARG_TYPE', /^spec/],
  ['unknown option', { file: 'true', timout: 5 }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /spec\.timout is not a known option/],
  ['file missing', {}, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^file must be a string/],
  ['file empty', { file: '' }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^file must not be empty/],
  ['NUL in file', { file: 'tr\0ue' }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^file must not contain NUL/],
  ['args not an array', { file: 'true', args: 'a b' }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^args must be an array/],
  ['non-string arg', { file: 'echo', args: ['ok', 42] }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^args\[1\] must be a string \(received number 42\)/],
  ['NUL in an arg', { file: 'echo', args: ['a\0b'] }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^args\[0\] must not contain NUL/],
  ['NUL in argv0', { file: 'echo', argv0: 'e\0' }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^argv0/],
  ['env not an object', { file: 'true', env: ['A=1'] }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^env must be an object/],
  ['env a Map (it would be an empty environment)', { file: 'true', env: new Map([['A', '1']]) }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^env must be an object of strings \(not a Map\)/],
  ['file null (it has no default)', { file: null }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^file must be a string \(received null\)/],
  ['file an http: URL', { file: new URL('http://example.com/true') }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^file must be a string or a file: URL \(received http: URL\)/],
  ['cwd a data: URL', { file: 'true', cwd: new URL('data:,x') }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^cwd must be a string or a file: URL/],
  // A file: URL that names no path here: fileURLToPath's own errors (ERR_INVALID_FILE_URL_HOST,
  // ERR_INVALID_FILE_URL_PATH) named no field, and are kept as the reason.
  ['file a file: URL with a host', { file: new URL('file://host/x') }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^file must be a file: URL that names a path on this machine \(received file:\/\/host\/x\): File URL host must be "localhost" or empty/],
  ['file a file: URL with an encoded /', { file: new URL('file:///a%2fb') }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^file must be a file: URL .*encoded \/ characters/],
  ['cwd a file: URL with a host', { file: 'true', cwd: new URL('file://host/x') }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^cwd must be a file: URL that names a path on this machine/],
  ['cwd a file: URL with an encoded /', { file: 'true', cwd: new URL('file:///a%2Fb') }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^cwd must be a file: URL .*encoded \/ characters/],
  ['NUL in a file: URL', { file: new URL('file:///bin/tr%00ue') }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^file must not contain NUL/],
  // URLs by their brand: a look-alike and a Proxy around a real URL pass instanceof URL, and URL's
  // getters then threw V8's uncoded "Cannot read private member"; a subclass's getters are not asked.
  ['file a URL look-alike', { file: Object.create(URL.prototype) }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^file must be a string or a file: URL \(received an object\)/],
  ['cwd a URL look-alike', { file: 'true', cwd: Object.create(URL.prototype) }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^cwd must be a string or a file: URL \(received an object\)/],
  ['file a Proxy around a file: URL', { file: new Proxy(new URL('file:///bin/true'), {}) }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^file must be a string or a file: URL/],
  ['cwd a Proxy around a file: URL', { file: 'true', cwd: new Proxy(new URL('file:///'), {}) }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^cwd must be a string or a file: URL/],
  ['file an http: URL whose getters say file:', { file: new (class extends URL { override get protocol() { return 'file:' } override get href() { return 'file:///bin/true' } })('http://x/bin/true') }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^file must be a string or a file: URL \(received http: URL\)/],
  ['NUL in an env value', { file: 'true', env: { A: 'x\0y' } }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^env\.A must not contain NUL/],
  ['= in an env name', { file: 'true', env: { 'A=B': 'x' } }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^env\["A=B"\]/],
  ['NUL in an env name', { file: 'true', env: { 'A\0': 'x' } }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^env\[/],
  ['non-string env value', { file: 'true', env: { A: 1 } }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^env\.A must be a string/],
  ['NUL in cwd', { file: 'true', cwd: '/tmp\0' }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^cwd/],
  ['unknown stdin value', { file: 'true', stdin: 'stdout' }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^stdin must be/],
  ['unknown stdout value', { file: 'true', stdout: 'stdout' }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^stdout must be/],
  ['unknown stderr value', { file: 'true', stderr: 'nowhere' }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^stderr must be/],
  ['stdout path with NUL', { file: 'true', stdout: { path: 'a\0' } }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^stdout\.path/],
  ['stdout path option typo', { file: 'true', stdout: { path: '/tmp/x', apend: true } }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^stdout\.apend/],
  ['append not boolean', { file: 'true', stdout: { path: '/tmp/x', append: 'yes' } }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^stdout\.append/],
  ['fd not open', { file: 'true', stdout: 987654 }, 'RangeError', 'ERR_INVALID_FD', /^stdout: fd 987654 is not an open file descriptor/],
  ['negative fd', { file: 'true', stdin: -1 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^stdin must be an integer fd/],
  ['fractional fd', { file: 'true', stderr: 2.5 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^stderr must be an integer fd/],
  ['input of a bad type', { file: 'cat', input: 42 }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^input must be a string, Buffer, TypedArray or DataView/],
  ['input with stdin', { file: 'cat', input: 'x', stdin: 'ignore' }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', /^input cannot be combined with stdin/],
  ['negative timeout', { file: 'true', timeout: -1 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^timeout must be a number of ms from 0 to 2147483647/],
  ['a timeout past 2^31-1 ms', { file: 'true', timeout: 2 ** 31 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^timeout must be a number of ms from 0 to 2147483647 \(received number 2147483648\)/],
  ['a timeout of 1e20', { file: 'true', timeout: 1e20 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^timeout/],
  ['a forceKillAfterDelay past 2^31-1 ms', { file: 'true', forceKillAfterDelay: 2 ** 31 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^forceKillAfterDelay/],
  ['a negative waitDelay', { file: 'true', waitDelay: -1 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^waitDelay/],
  ['NaN timeout', { file: 'true', timeout: NaN }, 'RangeError', 'ERR_OUT_OF_RANGE', /^timeout/],
  // A revoked Proxy: Array.isArray (in the checks and in describe) threw V8's uncoded TypeError.
  ['spec a revoked Proxy', revokedProxy(), 'TypeError', 'ERR_INVALID_ARG_TYPE', /^spec must be an object \(received a revoked Proxy\)/],
  ['file a revoked Proxy', { file: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^file must be a string or a file: URL \(received a revoked Proxy\)/],
  ['cwd a revoked Proxy', { file: 'true', cwd: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^cwd must be a string or a file: URL \(received a revoked Proxy\)/],
  ['args a revoked Proxy', { file: 'true', args: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^args must be an array of strings \(received a revoked Proxy\)/],
  ['an arg a revoked Proxy', { file: 'true', args: [revokedProxy()] }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^args\[0\] must be a string \(received a revoked Proxy\)/],
  ['env a revoked Proxy', { file: 'true', env: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^env must be an object of strings \(not a Map\) \(received a revoked Proxy\)/],
  ['an env value a revoked Proxy', { file: 'true', env: { A: revokedProxy() } }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^env\.A must be a string \(received a revoked Proxy\)/],
  ['fds a revoked Proxy', { file: 'true', fds: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^fds must be an object/],
  ['rlimits a revoked Proxy', { file: 'true', rlimits: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^rlimits must be an object/],
  ['a resource limit a revoked Proxy', { file: 'true', rlimits: { nofile: revokedProxy() } }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^rlimits\.nofile must be a number or 'unlimited' \(received a revoked Proxy\)/],
  ['terminal a revoked Proxy', { file: 'true', terminal: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^terminal must be true or \{ columns, rows \}/],
  ['groups a revoked Proxy', { file: 'true', groups: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^groups must be an array of numbers/],
  ['cpus a revoked Proxy', { file: 'true', cpus: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^cpus must be an array of numbers/],
  ['killSignal a revoked Proxy', { file: 'true', killSignal: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^killSignal must be a signal name or number \(received a revoked Proxy\)/],
  // stdin, stdout and stderr refuse every value they cannot take as ERR_INVALID_ARG_VALUE, listing what they take.
  ['stdin a revoked Proxy', { file: 'true', stdin: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^stdin must be .* \(received a revoked Proxy\)/],
  ['stdout a revoked Proxy', { file: 'true', stdout: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^stdout must be .* \(received a revoked Proxy\)/],
  ['stderr a revoked Proxy', { file: 'true', stderr: revokedProxy() }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^stderr must be .* \(received a revoked Proxy\)/],
  ['infinite timeout', { file: 'true', timeout: Infinity }, 'RangeError', 'ERR_OUT_OF_RANGE', /^timeout/],
  ['string timeout', { file: 'true', timeout: '5s' }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^timeout must be a number/],
  ['negative grace', { file: 'true', graceTimeout: -5 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^graceTimeout/],
  ['negative forceKillAfterDelay', { file: 'true', forceKillAfterDelay: -5 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^forceKillAfterDelay/],
  ['unknown signal name', { file: 'true', killSignal: 'SIGFOO' }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^killSignal is not a known signal/],
  ['unknown signal number', { file: 'true', killSignal: 999 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^killSignal/],
  // A real-time offset past SIGRTMAX - SIGRTMIN (30 with glibc): from either end, no signal.
  ['SIGRTMAX-n past SIGRTMIN', { file: 'true', killSignal: 'SIGRTMAX-31' }, 'RangeError', 'ERR_OUT_OF_RANGE', /^killSignal must be SIGRTMIN\+n or SIGRTMAX-n with n from 0 to 30 \(received string "SIGRTMAX-31"\)/],
  ['SIGRTMIN+n past SIGRTMAX', { file: 'true', killSignal: 'RTMIN+31' }, 'RangeError', 'ERR_OUT_OF_RANGE', /^killSignal must be SIGRTMIN\+n or SIGRTMAX-n/],
  ['a negative signal number', { file: 'true', killSignal: -1 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^killSignal must be a known signal number/],
  ['setsid not boolean', { file: 'true', setsid: 1 }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^setsid must be a boolean/],
  ['rlimits not an object', { file: 'true', rlimits: 5 }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^rlimits must be an object/],
  ['unknown rlimit', { file: 'true', rlimits: { files: 10 } }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^rlimits\.files is not a resource limit \(one of as, core/],
  ['inherited property name as rlimit', { file: 'true', rlimits: { toString: 1 } }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^rlimits\.toString/],
  ['negative rlimit', { file: 'true', rlimits: { nofile: -1 } }, 'RangeError', 'ERR_OUT_OF_RANGE', /^rlimits\.nofile must be an integer/],
  ['fractional rlimit', { file: 'true', rlimits: { cpu: 1.5 } }, 'RangeError', 'ERR_OUT_OF_RANGE', /^rlimits\.cpu/],
  ['bad rlimit word', { file: 'true', rlimits: { cpu: 'infinity' } }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^rlimits\.cpu must be a number or 'unlimited'/],
  ['soft above hard', { file: 'true', rlimits: { nofile: { soft: 100, hard: 10 } } }, 'RangeError', 'ERR_OUT_OF_RANGE', /^rlimits\.nofile\.soft must be at most the hard limit 10/],
  ['soft unlimited, hard finite', { file: 'true', rlimits: { nofile: { soft: 'unlimited', hard: 10 } } }, 'RangeError', 'ERR_OUT_OF_RANGE', /^rlimits\.nofile\.soft/],
  ['negative maxBuffer', { file: 'true', maxBuffer: -1 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^maxBuffer/],
  ['unknown launcher', { file: 'true', launcher: 'vfork' }, 'TypeError', 'ERR_INVALID_ARG_VALUE', /^launcher must be 'auto', 'posix_spawn' or 'fork'/],
  ['measure not boolean', { file: 'true', measure: 'yes' }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^measure must be a boolean/],
  ['killOnExit not boolean', { file: 'true', killOnExit: 'yes' }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^killOnExit must be a boolean/],
  ['posix_spawn with rlimits', { file: 'true', launcher: 'posix_spawn', rlimits: { cpu: 1 } }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', /^launcher 'posix_spawn' cannot be combined with rlimits/],
  ['uid not a number', { file: 'true', uid: '0' }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^uid must be a number \(received string "0"\)/],
  ['negative uid', { file: 'true', uid: -1 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^uid must be an integer from 0 to 4294967294/],
  ['uid (uid_t)-1, "unchanged" to the kernel', { file: 'true', uid: 2 ** 32 - 1 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^uid must be an integer/],
  ['fractional gid', { file: 'true', gid: 1.5 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^gid must be an integer from 0 to 4294967294/],
  ['groups not an array', { file: 'true', groups: 5 }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^groups must be an array of numbers/],
  ['a group not a number', { file: 'true', groups: [1, 'wheel'] }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^groups\[1\] must be a number/],
  ['a hole in groups', { file: 'true', groups: [, 1] }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^groups\[0\] must be a number \(received undefined\)/],
  ['a negative group', { file: 'true', groups: [-3] }, 'RangeError', 'ERR_OUT_OF_RANGE', /^groups\[0\] must be an integer/],
  ['more groups than NGROUPS_MAX', { file: 'true', groups: new Array(65537).fill(1) }, 'RangeError', 'ERR_OUT_OF_RANGE', /^groups\.length must be at most 65536/],
  ['umask past 0o777', { file: 'true', umask: 0o1000 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^umask must be an integer from 0 to 511/],
  ['umask a string', { file: 'true', umask: '022' }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^umask must be a number/],
  ['processGroup a string', { file: 'true', processGroup: 'new' }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^processGroup must be a boolean or a process group id/],
  ['negative processGroup', { file: 'true', processGroup: -1 }, 'RangeError', 'ERR_OUT_OF_RANGE', /^processGroup must be an integer/],
  ['processGroup with setsid', { file: 'true', processGroup: true, setsid: true }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', /^processGroup cannot be combined with setsid/],
  ['cpus empty', { file: 'true', cpus: [] }, 'RangeError', 'ERR_OUT_OF_RANGE', /^cpus must be a non-empty array of CPU numbers/],
  ['cpus not an array', { file: 'true', cpus: 1 }, 'TypeError', 'ERR_INVALID_ARG_TYPE', /^cpus must be an array of numbers/],
  ['a cpu at CPU_SETSIZE', { file: 'true', cpus: [0, 1024] }, 'RangeError', 'ERR_OUT_OF_RANGE', /^cpus\[1\] must be an integer from 0 to 1023/],
  ['a negative cpu', { file: 'true', cpus: [-1] }, 'RangeError', 'ERR_OUT_OF_RANGE', /^cpus\[0\]/],
  ['posix_spawn with uid', { file: 'true', launcher: 'posix_spawn', uid: 0 }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', /^launcher 'posix_spawn' cannot be combined with uid: posix_spawn cannot set uid in the child/],
  ['posix_spawn with umask and cpus', { file: 'true', launcher: 'posix_spawn', umask: 0, cpus: [0] }, 'TypeError', 'ERR_INCOMPATIBLE_OPTION_PAIR', /^launcher 'posix_spawn' cannot be combined with umask: posix_spawn cannot set umask, cpus/],
]

for (const [api, run] of APIS) {
  t.test(`${api}: bad specs are typed errors`, async t => {
    for (const [name, spec, type, code, message] of rows) {
      await t.rejects(run(spec as ChildSpec), { name: type, code, message }, name)
    }
  })
}

for (const [api, call] of [['spawnChildSync', spawnChildSync], ['startChild', startChild]] as const) t.test(`${api} throws synchronously`, async t => {
  for (const [name, spec, type, code] of rows) t.throws(() => call(spec as ChildSpec), { name: type, code }, name)
})

t.test('each field is read once: a getter that changes its answer cannot slip past its check', async t => {
  for (const [api, run] of APIS) {
    // A getter per field that counts its reads, good on the first and bad on every later one: the
    // value checked must be the value used.
    const reads: Record<string, number> = {}
    const spec = {} as Record<string, unknown>
    const fields: Record<string, [unknown, unknown]> = {
      file: ['cat', 42], input: [Buffer.from('in'), null], maxBuffer: [100, -1], timeout: [60000, NaN],
      args: [[], 'x'], env: [{ PATH: process.env.PATH! }, 7], killSignal: ['SIGTERM', 'SIGNOPE'], waitDelay: [100, -5],
    }
    for (const [key, [good, bad]] of Object.entries(fields)) {
      Object.defineProperty(spec, key, { enumerable: true, get() { reads[key] = (reads[key] ?? 0) + 1; return reads[key] === 1 ? good : bad } })
    }
    const r = await run(spec as unknown as ChildSpec)
    t.equal(r.stdout.toString(), 'in', `${api}: ran with the values first read`)
    t.same(reads, Object.fromEntries(Object.keys(fields).map(key => [key, 1])), `${api}: every field read once`)
    // Bad on the first read: that value's typed error, naming it.
    let n = 0
    const flip = Object.defineProperty({ file: 'true' }, 'maxBuffer', { enumerable: true, get: () => (n++ === 0 ? -1 : 5) })
    await t.rejects(run(flip as ChildSpec), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: /^maxBuffer .*\(received number -1\)/ }, `${api}: the value read is the one refused`)
  }
})

t.test("a spec's own fields only: options inherited from a polluted Object.prototype are never read", async t => {
  const polluted = { cwd: '/nonexistent', env: { POLLUTED: '1' }, setsid: 'yes', shell: true, timeout: -1, stdout: 'inherit', input: 'x' }
  const proto = Object.prototype as unknown as Record<string, unknown>
  // Polluted only while the runs are made; asserted on once it is clean again.
  const seen: Array<[string, unknown]> = []
  Object.assign(proto, polluted)
  try {
    for (const [api, run] of APIS) {
      const r = await run({ file: 'sh', args: ['-c', 'pwd; echo "[$POLLUTED]"'], cwd: '/' })
      seen.push([api, { stdout: r.stdout.toString(), spawnError: r.spawnError }])
    }
  } finally {
    for (const key of Object.keys(polluted)) delete proto[key]
  }
  t.equal(seen.length, APIS.length)
  for (const [api, got] of seen) t.same(got, { stdout: '/\n[]\n', spawnError: null }, `${api}: ran as its own fields say`)
})

t.test('spawnChildSync refuses an AbortSignal', async t => {
  t.throws(() => spawnChildSync({ file: 'true', signal: new AbortController().signal }), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', message: /^signal is for spawnChild/ })
  t.throws(() => startChild({ file: 'true', signal: revokedProxy() as AbortSignal }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /^signal must be an AbortSignal \(received a revoked Proxy\)/ }, 'startChild: signal a revoked Proxy')
})

t.test('valid edge values are accepted', t => eachPath(t, '', async (t, { run }) => {
  t.equal((await run({ file: 'true', timeout: 0 })).exitCode, 0, 'timeout 0 = none')
  t.equal((await run({ file: 'true', maxBuffer: Infinity })).exitCode, 0, 'maxBuffer Infinity')
  t.equal((await run({ file: 'true', killSignal: 15 })).exitCode, 0, 'signal by number')
  t.equal((await run({ file: 'true', killSignal: 'TERM' })).exitCode, 0, 'signal without SIG')
  t.equal((await run({ file: 'true', env: { A: undefined } })).exitCode, 0, 'undefined env values are skipped')
  t.equal((await run({ file: 'cat', input: new Uint8Array([104, 105]) })).stdout.toString(), 'hi', 'Uint8Array input')
  // Views of a buffer transferred away before the call: no bytes, whatever the view (a DataView's
  // or a Float64Array's threw V8's own TypeError, naming no field).
  for (const make of [(b: ArrayBuffer) => new Uint8Array(b), (b: ArrayBuffer) => new DataView(b), (b: ArrayBuffer) => new Float64Array(b)]) {
    const buffer = new ArrayBuffer(16)
    const view = make(buffer)
    structuredClone(buffer, { transfer: [buffer] })
    const r = await run({ file: 'wc', args: ['-c'], input: view })
    t.same([r.exitCode, r.stdout.toString().trim()], [0, '0'], `a detached ${view.constructor.name} is an empty input`)
  }
  t.equal((await run({ file: 'true', launcher: 'posix_spawn', setsid: true })).launcher, 'posix_spawn', 'setsid via POSIX_SPAWN_SETSID when forced')
}, { launchers: ['auto'] }))
