#!/usr/bin/env python3
# Counts per second, in the fio window, of a guest trace (trace-guest.sh):
#   trace-count.py TRACE [N]
# LOC: local timer interrupts; "LOC no expiry": ones before which the
# previous one on that CPU expired no hrtimer; first:F: the first hrtimer
# a LOC expired; hr:F / start:F: hrtimer expiries / starts of F; tm:F:
# timer-wheel expiries; sw->COMM: switches to COMM; wq:F: work items run.
import sys,re,collections
c=collections.Counter()
lines=[]
for l in open(sys.argv[1]):
    if l.startswith('#'): continue
    m=re.search(r'\[(\d+)\].*?\s(\d+\.\d+): (\w+):(.*)',l)
    if not m: continue
    lines.append((int(m.group(1)),float(m.group(2)),m.group(3),m.group(4)))
w=collections.Counter(int(t) for cpu,t,ev,r in lines if ev=='irq_handler_entry' and 'nvme' in r)
secs=sorted(s for s in w if w[s]>2000)
if len(secs) < 3:
    # traced without irq events: fio's window is where its helper wakes
    # about 100 times a second
    w=collections.Counter(int(t) for cpu,t,ev,r in lines
                          if ev=='hrtimer_expire_entry' and 'hrtimer_wakeup' in r)
    secs=sorted(s for s in w if w[s]>90)
lo,hi=secs[1],secs[-1]   # full seconds only
n=hi-lo
pend={}
for cpu,t,ev,r in lines:
    if not (lo<=t<hi): continue
    if ev=='sched_switch':
        m=re.search(r'next_comm=(\S+)',r); c['sw->'+re.sub(r'\d+','N',m.group(1))]+=1
    elif ev=='workqueue_execute_start':
        c['wq:'+r.split('function ')[-1].strip()]+=1
    elif ev in ('irq_handler_entry','sched_wakeup'): pass
    elif ev=='local_timer_entry':
        if pend.get(cpu): c['LOC no expiry']+=1
        pend[cpu]=True; c[ev]+=1
    elif ev=='hrtimer_expire_entry':
        f=re.search(r'function=(\S+)',r).group(1)
        if pend.get(cpu): c['first:'+f]+=1; pend[cpu]=False
        c['hr:'+f]+=1
    elif ev=='hrtimer_start':
        f=re.search(r'function=(\S+)',r).group(1); c['start:'+f]+=1
    elif ev=='timer_expire_entry':
        c['tm:'+re.search(r'function=(\S+)',r).group(1)]+=1
    else: c[ev]+=1
print('window',lo,hi)
for k,v in sorted(c.items(), key=lambda x:-x[1])[:int(sys.argv[2]) if len(sys.argv)>2 else 24]: print('%8.1f'%(v/n),k)
