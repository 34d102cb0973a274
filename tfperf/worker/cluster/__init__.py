"""The server side of a multi-process case: a ParameterServerStrategy task and the cluster
resolvers."""
