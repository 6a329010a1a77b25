"""Quick measurement: Adult train_rows N, band or one-sided, exact vs union, S seeds."""
import sys, time, warnings, numpy as np
sys.path.insert(0, 'benchmarks')
from safeclf import ltt, posthoc, registry
from safeclf.jobs import load_dataset, preprocess, split_task
N=int(sys.argv[1]); S=int(sys.argv[2]); test=sys.argv[3]; mode=sys.argv[4]; kappa=float(sys.argv[5]) if len(sys.argv)>5 else 0.8
if test=='union':
    ltt.pair_test = lambda bound: 'union'
items = [{"rate":"fairness_ratio","min":kappa,"max":1/kappa}] if mode=='band' else [{"rate":"fairness_ratio","min":kappa}]
res=[]
for seed in range(S):
    entry={"dataset":"adult","params":{},"name":"adult","split":{"predefined":True,"train_rows":N}}
    task=preprocess(split_task(load_dataset(entry),entry,seed,None),"minmax")
    t0=time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        out=posthoc.certified_fit(registry.get_method('logreg'),{},task,{"delta":0.05,"fraction":float(__import__("os").environ.get("FRAC","0.3"))},items,seed)
    dt=time.perf_counter()-t0
    if not out.passed:
        res.append((None,None,None,dt)); continue
    y=np.asarray(task.test.y)==np.unique(task.train.y)[-1]
    g=np.asarray(task.test.rows['groups']).astype(str); priv=str(task.info['privileged_group'])
    pred=out.estimator.predict(task.test.X)==out.estimator.classes_[-1]
    err=float(np.mean(pred!=y)); r=pred[g!=priv].mean()/max(pred[g==priv].mean(),1e-12); pos=pred.mean()
    res.append((err,r,pos,dt))
ok=[x for x in res if x[0] is not None]
print(f"N={N} {mode} k={kappa} {test}: solutions {len(ok)}/{S} err {np.mean([x[0] for x in ok]):.4f} ratio mean {np.mean([x[1] for x in ok]):.3f} low-fail {sum(x[1]<kappa for x in ok)} high-fail {sum(x[1]>1/kappa for x in ok) if mode=='band' else '-'} pos-share {np.mean([x[2] for x in ok]):.3f} degenerate(>=.99) {sum(max(x[2],1-x[2])>=0.99 for x in ok)} time {np.mean([x[3] for x in res]):.2f}")
