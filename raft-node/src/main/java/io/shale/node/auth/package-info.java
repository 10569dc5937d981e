/**
 * Who may call what on the client API: users and roles as the replicated state holds them ({@link
 * io.shale.node.auth.AuthState}), the changes to them and how an entry applies one ({@link
 * io.shale.node.auth.AuthApplier}), what a user's roles allow ({@link io.shale.node.auth.Grants}),
 * passwords ({@link io.shale.node.auth.PasswordHashes}) and tokens ({@link
 * io.shale.node.auth.Tokens}), and the interceptor that names the caller of each call and refuses
 * what its grants do not cover ({@link io.shale.node.auth.ApiGuard}, by {@link
 * io.shale.node.auth.Requirement}).
 */
package io.shale.node.auth;
