// errnoText: a system call's failure as the commands say it, "<text> (<CODE>)".
import t from 'tap'
import { errnoText } from '../lib/errors.js'

t.test('errnoText: the text of the errno, then its code', async (t) => {
  const open = Object.assign(new Error("ENOENT: no such file or directory, open 'x'"), { code: 'ENOENT', syscall: 'open', errno: -2 })
  t.equal(errnoText(open), 'no such file or directory (ENOENT)')
  // A stream's write error names no text ("write ECONNRESET"): the system's table has it.
  const reset = Object.assign(new Error('write ECONNRESET'), { code: 'ECONNRESET', syscall: 'write', errno: -104 })
  t.equal(errnoText(reset), 'connection reset by peer (ECONNRESET)')
  t.equal(errnoText(new Error('plain')), 'plain')
  t.equal(errnoText('text'), 'text')
})
