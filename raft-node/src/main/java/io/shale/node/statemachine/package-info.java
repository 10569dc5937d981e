/**
 * The replicated state machine: {@link io.shale.node.statemachine.ShaleStateMachine} applies
 * committed {@link io.shale.node.statemachine.Command}s (their log form:
 * {@link io.shale.node.statemachine.CommandCodec}) to the engine and answers
 * {@link io.shale.node.statemachine.Query}s with {@link io.shale.node.statemachine.Reply}s. The
 * Raft log is the engine's write-ahead log: see the state machine's class comment for how the
 * two indexes meet on restart.
 */
package io.shale.node.statemachine;
