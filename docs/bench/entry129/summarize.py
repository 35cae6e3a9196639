import json,sys,glob,os
d=sys.argv[1]; tags=sys.argv[2:] if len(sys.argv)>2 else ['0','1']
runs={}
for f in sorted(glob.glob(f'{d}/ab-*-*.json')):
    b=os.path.basename(f)[3:-5]; tag,r=b.rsplit('-',1)
    j=json.load(open(f))
    for c in j['cases']:
        runs.setdefault(c['name'],{}).setdefault(tag,[]).append((c['median_us'],c['percent_of_copy']))
print(f"| case | " + " | ".join(tags) + " | change |")
for n,v in runs.items():
    cells=[]; means=[]
    for t in tags:
        xs=v.get(t,[])
        m=sum(x[0] for x in xs)/len(xs); p=sum(x[1] for x in xs)/len(xs); means.append(m)
        cells.append(f"{m:.2f} ({p:.1f}%) [{', '.join(f'{x[0]:.2f}' for x in xs)}]")
    print(f"| {n} | "+" | ".join(cells)+f" | {100*(means[-1]/means[0]-1):+.1f}% |")
