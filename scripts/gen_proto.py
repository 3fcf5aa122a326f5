#!/usr/bin/env python3
# Writes proto/onnx.proto from ../shared/spec/onnx-proto-fields.md (the field list of the ONNX schema).
# Usage: python3 scripts/gen_proto.py   (run from the repository root)
import re
lines=open('/work/shared/spec/onnx-proto-fields.md').read().split('\n')
blocks=[];cur=None
for l in lines:
    m=re.match(r'## (message|enum) (\S+)',l)
    if m: cur={'kind':m.group(1),'name':m.group(2),'items':[],'children':[]}; blocks.append(cur); continue
    if cur and l.startswith('- '): cur['items'].append(l[2:])
top=[]
for b in blocks:
    parts=b['name'].split('.'); b['short']=parts[-1]
    if len(parts)==1: top.append(b)
    else: [x for x in blocks if x['name']=='.'.join(parts[:-1])][0]['children'].append(b)
def emit(b,ind):
    p='  '*ind; out=[]
    if b['kind']=='enum':
        out.append(f"{p}enum {b['short']} {{")
        for it in b['items']:
            n,v=[x.strip() for x in it.split('=')]
            out.append(f"{p}  {n} = {v};")
        out.append(f"{p}}}"); return out
    out.append(f"{p}message {b['short']} {{")
    for c in b['children']: out+=emit(c,ind+1)
    oneofs={}
    for it in b['items']:
        if it.startswith('reserved'):
            out.append(f"{p}  {it};"); continue
        m=re.match(r'(\d+): oneof (\S+) (\S+) (\S+)$',it)
        if m:
            num,on,typ,name=m.groups(); oneofs.setdefault(on,[]).append((typ,name,num)); continue
        m=re.match(r'(\d+): (optional|repeated|required) (\S+) (\S+)(?: \[(.*)\])?$',it)
        assert m, it
        num,label,typ,name,opt=m.groups()
        o=f" [{opt}]" if opt else ""
        out.append(f"{p}  {label} {typ} {name} = {num}{o};")
    for on,fs in oneofs.items():
        out.append(f"{p}  oneof {on} {{")
        for typ,name,num in fs: out.append(f"{p}    {typ} {name} = {num};")
        out.append(f"{p}  }}")
    out.append(f"{p}}}"); return out
hdr='''// onnxir's copy of the ONNX protobuf schema, IR version 14.
//
// Written from the field list of the current ONNX schema (messages, fields,
// numbers and enum values); wire-compatible with ONNX. It lives in its own
// proto package (onnxir.proto) and file path (onnxir/onnx.proto) so that a
// program can link onnxir together with libonnx or onnxruntime, which register
// `onnx/onnx.proto` in package `onnx`, without descriptor clashes.
//
// Regenerate with scripts/gen_proto.py when the schema moves on.
syntax = "proto2";

package onnxir.proto;

option optimize_for = SPEED;
'''
body=[]
for b in top: body+=emit(b,0)+['']
open('proto/onnx.proto','w').write(hdr+'\n'+'\n'.join(body))
