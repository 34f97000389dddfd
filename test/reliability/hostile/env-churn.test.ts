// Class 8: environment churn. A Worker with env: SHARE_ENV sets and deletes hundreds of variables
// in a loop (the C environ array reallocated again and again) while the main thread runs 2,000
// spawnChildSync of `sh -c 'printf %s "$MARKER"'` with no `env` (inherit), MARKER having been set
// to 'stable' before: every result must be exit 0, no spawnError, stdout 'stable'. The same with
// spawnChild, 16 in flight. And node's child_process.spawnSync under the same churn as the sanity
// row (it must be always right, or the churn itself is the problem).
import t from 'tap'
import { assertFreshBuild, assertHealthy, runFixture } from './helpers.js'

assertFreshBuild(t)

const MODES: Array<[string, number]> = [['node-sync', 200], ['harness-sync', 2000], ['harness-async', 2000]]

t.test('children inherit a stable environment while a SHARE_ENV worker churns it', async t => {
  // One at a time: each run has a churning worker on a core of its own.
  for (const [mode, runs] of MODES) {
    const r = await runFixture('env-churn.mjs', [mode, String(runs)], { timeoutMs: 280000 })
    t.test(r.label, async t => {
      const j = assertHealthy(t, r)
      if (!j) return
      t.ok(j.churnDuring > 1000, `the environment really churned meanwhile (${j.churnDuring} changes)`)
      t.equal(j.ok, runs, `all ${runs} children exited 0 with no spawnError and printed 'stable' (${j.badCount} did not)`, { bad: j.bad })
      t.equal(j.markerAfter, 'stable', 'MARKER is still set')
    })
  }
})
