/**
 * The replicated state machine. {@link io.shale.node.statemachine.ShaleStateMachine} is the Ratis
 * adapter; what a committed {@link io.shale.node.statemachine.Command} (log form: {@link
 * io.shale.node.statemachine.CommandCodec}) does is decided by the {@link
 * io.shale.node.statemachine.CommandApplier}, without Ratis, as a write batch and a {@link
 * io.shale.node.statemachine.Reply}, every user-key write through the entry's {@link
 * io.shale.node.statemachine.EntryView} (which keeps each key's {@link
 * io.shale.node.statemachine.KeyRevisions}), transactions by the {@link
 * io.shale.node.statemachine.TxnApplier}; {@link io.shale.node.statemachine.Query}s are answered by
 * the {@link io.shale.node.statemachine.QueryHandler}; {@link
 * io.shale.node.statemachine.TermTracker} knows the term of every applied index and {@link
 * io.shale.node.statemachine.RequestRecords} the replies of applied request ids. The Raft log is
 * the engine's write-ahead log: see the state machine's class comment for how the two indexes meet
 * on restart.
 */
package io.shale.node.statemachine;
