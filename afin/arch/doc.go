// Package arch declares the AFIN network of the paper ("Amortized Factor
// Inference Networks", Sec. 4.2 and App. B) once, without any numerical
// backend: its configuration (Config), every trainable tensor as a typed
// structure (Network: adapters, encoder BoxMLPs, BoxTransformer merge
// blocks, Gaussian or flow decoder), the family orders and descriptor
// widths of the factor adapters, the network's input batch and its
// descriptor builder (Batch, NewBatch), and the flow's coupling masks.
//
// Every implementation of the network consumes this one declaration: the
// GoMLX graph in package afin (training, inference), the GoMLX-free CPU
// forward pass, the parameter counts and the checkpoint format. A tensor
// is reached through a field (net.Merge[b].Q.Pair.Layers[0].W), never by
// a name built at run time, so a mismatch between the declaration and a
// user of it is a compile error. Network.Tensors lists the tensors in one
// stable order with their names, shapes, initialisation rules and data.
//
// This package imports no GoMLX, so a reader of checkpoints or a second
// implementation does not compile the graph library.
package arch
