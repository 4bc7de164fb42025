# Summary table of compare.sh: means over seeds of afin and Stan, and afin/Stan ratios.
import re,collections
def parse(f,tag):
    out=collections.defaultdict(list)
    for l in open(f):
        if not l.startswith(tag): continue
        lik=l.split()[1]
        g=lambda k: float(re.search(re.escape(k)+r" ([0-9.]+)",l).group(1))
        out[lik].append(dict(epg=g("ess/grad"), eps=g("ess/sampler-s"), epc=g("ess/cpu-s"), gpc=g("grads/cpu-s")))
    return out
a=parse('afin.log','AFIN'); s=parse('stan.log','STAN')
m=lambda xs,k: sum(x[k] for x in xs)/len(xs)
print(f"{'likelihood':16}{'ESS/grad afin':>14}{'Stan':>8}{'ratio':>7}{'ESS/s sampler afin':>20}{'Stan':>8}{'ratio':>7}{'ESS/cpu-s process afin':>24}{'Stan':>8}{'ratio':>7}")
for lik in a:
    print(f"{lik:16}{m(a[lik],'epg'):14.4f}{m(s[lik],'epg'):8.4f}{m(a[lik],'epg')/m(s[lik],'epg'):7.2f}{m(a[lik],'eps'):20.0f}{m(s[lik],'eps'):8.0f}{m(a[lik],'eps')/m(s[lik],'eps'):7.2f}{m(a[lik],'epc'):24.0f}{m(s[lik],'epc'):8.0f}{m(a[lik],'epc')/m(s[lik],'epc'):7.2f}")
