package cpu

import (
	"context"

	"github.com/afin-bench/afin/afin/arch"
)

// The paper's Encoding block (Sec. 4.2 "Encoding", App. B.1): type
// adapters and the shared encoder, forward (encoding) and backward
// (encodingBackward).

// adapter is one factor type's packed adapter: node and pair MLPs.
type adapter struct{ node, pair *mlp }

// encoding is the paper's Encoding block (Sec. 4.2, App. B.1): every
// factor through its type's adapter (adapters), then through the shared
// encoder BoxMLPs as residual layers (pair increments symmetrised),
// giving the tokens E^(0) in w.x (K×d×C) and w.p (K×d×d×C). With sv set
// it saves each encoder layer's input for encodingBackward.
func (n *Net) encoding(ctx context.Context, w *workspace, batch *arch.Batch, t task, K int, sv *taskSave) error {
	c, d := n.cfg.C, batch.D
	w.x, w.p = grow(w.x, K*d*c), grow(w.p, K*d*d*c)
	if err := n.adapters(ctx, w, batch, t); err != nil {
		return err
	}
	if sv != nil {
		for len(sv.encP) < len(n.encoder) {
			sv.encP, sv.encX = append(sv.encP, nil), append(sv.encX, nil)
		}
	}
	for l, e := range n.encoder {
		if sv != nil {
			sv.encP[l], sv.encX[l] = keep(sv.encP[l], w.p), keep(sv.encX[l], w.x)
		}
		in := boxIn{p: w.p, x: w.x, k: K, d: d}
		err := n.boxMLP(ctx, w, e, in, func(k0, k1 int, dP, dX []float32) {
			addSym(w.p[k0*d*d*c:k1*d*d*c], dP, d, c, false)
			addTo(w.x[k0*d*c:k1*d*c], dX)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// adapters fills the tokens: token 0 from the prior's adapters, then one
// token per real site from its family's adapters (runs of consecutive
// sites of one family go through the MLPs together, a BoxMLP chunk of
// tokens at a time, with a look at ctx before each). Pair outputs are
// symmetrised.
func (n *Net) adapters(ctx context.Context, w *workspace, batch *arch.Batch, t task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c, d, b := n.cfg.C, batch.D, t.b
	f := t.prior
	wn, wp := arch.PriorNodeWidth[f], arch.PriorPairWidth[f]
	n.prior[f].node.run(w, w.x[:d*c], batch.PriorNode[f][b*d*wn:], d)
	n.prior[f].pair.run(w, w.p[:d*d*c], batch.PriorPair[f][b*d*d*wp:], d*d)
	symInPlace(w.p[:d*d*c], d, c)
	tc := tokensPerChunk(d)
	for s := 0; s < len(t.sites); {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := s + 1
		for e < len(t.sites) && e-s < tc && t.fams[e] == t.fams[s] && t.sites[e] == t.sites[e-1]+1 {
			e++
		}
		f := t.fams[s]
		tok := b*batch.NPad + t.sites[s]
		wn, wp := arch.LikNodeWidth[f], arch.LikPairWidth[f]
		k0 := 1 + s
		n.lik[f].node.run(w, w.x[k0*d*c:], batch.LikNode[f][tok*d*wn:], (e-s)*d)
		n.lik[f].pair.run(w, w.p[k0*d*d*c:], batch.LikPair[f][tok*d*d*wp:], (e-s)*d*d)
		symInPlace(w.p[k0*d*d*c:(1+e)*d*d*c], d, c)
		s = e
	}
	return nil
}

// encodingBackward backpropagates the tokens' gradients (s.gP, s.gX)
// through the encoder layers, last first, and into the adapters.
func (n *Net) encodingBackward(ctx context.Context, w *workspace, s *trainState, batch *arch.Batch, t task, K, d int) error {
	c := n.cfg.C
	for l := len(n.encoder) - 1; l >= 0; l-- {
		s.tP = keep(s.tP, s.gP)
		symInPlace(s.tP, d, c)
		s.tX = keep(s.tX, s.gX)
		in := boxBackIn{boxIn: boxIn{p: s.sv.encP[l], x: s.sv.encX[l], k: K, d: d},
			gOutP: s.tP, gOutX: s.tX, gInP: s.gP, gInX: s.gX}
		if err := n.boxMLPBackward(ctx, w, &s.gw, n.encoder[l], s.box(n.encoder[l]), in); err != nil {
			return err
		}
	}
	n.adaptersBackward(s, batch, t, d)
	return nil
}

// adaptersBackward backpropagates the token gradients into the adapter
// MLPs (the descriptors are inputs: no gradient further).
func (n *Net) adaptersBackward(s *trainState, batch *arch.Batch, t task, d int) {
	c, b := n.cfg.C, t.b
	s.tP = keep(s.tP, s.gP)
	symInPlace(s.tP, d, c) // the pair outputs were symmetrised
	f := t.prior
	wn, wp := arch.PriorNodeWidth[f], arch.PriorPairWidth[f]
	ad := n.prior[f]
	ad.node.backward(&s.gw, batch.PriorNode[f][b*d*wn:(b+1)*d*wn], d, s.gX[:d*c], nil, s.g.mlpGradOf(ad.node))
	ad.pair.backward(&s.gw, batch.PriorPair[f][b*d*d*wp:(b+1)*d*d*wp], d*d, s.tP[:d*d*c], nil, s.g.mlpGradOf(ad.pair))
	for i := 0; i < len(t.sites); {
		e := i + 1
		for e < len(t.sites) && t.fams[e] == t.fams[i] && t.sites[e] == t.sites[e-1]+1 {
			e++
		}
		f := t.fams[i]
		tok := b*batch.NPad + t.sites[i]
		wn, wp := arch.LikNodeWidth[f], arch.LikPairWidth[f]
		k0, k1 := 1+i, 1+e
		ad := n.lik[f]
		ad.node.backward(&s.gw, batch.LikNode[f][tok*d*wn:(tok+e-i)*d*wn], (e-i)*d, s.gX[k0*d*c:k1*d*c], nil, s.g.mlpGradOf(ad.node))
		ad.pair.backward(&s.gw, batch.LikPair[f][tok*d*d*wp:(tok+e-i)*d*d*wp], (e-i)*d*d, s.tP[k0*d*d*c:k1*d*d*c], nil, s.g.mlpGradOf(ad.pair))
		i = e
	}
}

// encodingWorkspaceFloats is the token state X and P of all K = 1 + n
// tokens, which the later blocks update in place.
func encodingWorkspaceFloats(cfg arch.Config, d, n int) int64 {
	K, dd, c := int64(1+n), int64(d), int64(cfg.C)
	return K * (dd + dd*dd) * c
}

// encodingFLOPs counts the adapters (a diag_gaussian prior and
// lin_gaussian sites) and the EncLayers BoxMLPs, each costing box.
func encodingFLOPs(cfg arch.Config, d, n int, box func(h, l int) int64) int64 {
	c := cfg.C
	pn, pp := arch.PriorNodeWidth[0], arch.PriorPairWidth[0]
	ln, lp := arch.LikNodeWidth[0], arch.LikPairWidth[0]
	ah, al := cfg.AdapterH, cfg.AdapterL
	f := mlpFLOPs(d, pn, c, ah, al) + mlpFLOPs(d*d, pp, c, ah, al) +
		mlpFLOPs(n*d, ln, c, ah, al) + mlpFLOPs(n*d*d, lp, c, ah, al)
	return f + int64(cfg.EncLayers)*box(cfg.BoxH, cfg.BoxL)
}
