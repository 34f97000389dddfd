import t from 'tap'
import { parseCpuList, parseDuration, parseRlimit, parseSize } from '../../lib/cli/units.js'

t.test('parseDuration', async t => {
  const rows: Array<[string, number]> = [['500ms', 500], ['5s', 5000], ['1.5s', 1500], ['2m', 120000], ['1h', 3600000], ['3', 3000], ['0', 0], ['.5s', 500]]
  for (const [text, ms] of rows) t.equal(parseDuration(text), ms, text)
  for (const bad of ['', 'x', '5x', '-1s', '1e3', 's', '5 s s', 'Infinity']) t.throws(() => parseDuration(bad), { code: 'ERR_USAGE' }, JSON.stringify(bad))
})

t.test('parseSize', async t => {
  const rows: Array<[string, number]> = [['4096', 4096], ['512K', 524288], ['2G', 2147483648], ['1.5M', 1572864], ['2g', 2147483648], ['1KiB', 1024], ['10B', 10]]
  for (const [text, bytes] of rows) t.equal(parseSize(text), bytes, text)
  t.equal(parseSize('1KB'), 1024, '1KB')
  // '2iB' and '2BB' were 2 (a unit letter optional before 'iB'), '1.5' was 1 (floored).
  for (const bad of ['', 'K', '-1', '2X', '1e9', '99999999999T', '2iB', '2BB', '2ib', '1.5', '1.5B', '0.3K']) t.throws(() => parseSize(bad), { code: 'ERR_USAGE' }, JSON.stringify(bad))
  t.throws(() => parseSize('1.5', '--rlimit nofile value'), { message: "invalid --rlimit nofile value '1.5' (not a whole number)" })
  // Whole-ness is read from the digits, not a double: these were 64, 1024 and 2.
  for (const bad of ['64.0000000000000001', '1.00000000000000001K', '2.000000000000000000001']) t.throws(() => parseSize(bad), { message: /not a whole number/ }, bad)
  t.same(['1.5K', '0.5K', '64.000', '0.25M'].map((text) => parseSize(text)), [1536, 512, 64, 262144], 'fractions that are whole numbers of bytes')
})

t.test('parseRlimit', async t => {
  t.same(parseRlimit('as=2G'), ['as', 2147483648])
  t.same(parseRlimit('NOFILE=256'), ['nofile', 256])
  t.same(parseRlimit('RLIMIT_CORE=unlimited'), ['core', 'unlimited'])
  t.same(parseRlimit('nofile=64:128'), ['nofile', { soft: 64, hard: 128 }])
  for (const bad of ['as', '=5', 'as=', 'as=lots', 'bogus=5', 'rlimit_=1', '__proto__=1']) t.throws(() => parseRlimit(bad), { code: 'ERR_USAGE' }, bad)
})

t.test('parseCpuList: taskset -c lists', async t => {
  const rows: Array<[string, number[]]> = [['1', [1]], ['0,2', [0, 2]], ['0-3', [0, 1, 2, 3]], ['3,0-1,1', [0, 1, 3]], ['1023', [1023]]]
  for (const [text, cpus] of rows) t.same(parseCpuList(text, '--cpu', 1024), cpus, text)
  for (const bad of ['', 'x', '1,', '-1', '3-1', '1024', '0-1024', '1.5', ' 1', '0x1']) {
    t.throws(() => parseCpuList(bad, '--cpu', 1024), { code: 'ERR_USAGE', message: /^invalid --cpu / }, JSON.stringify(bad))
  }
})
