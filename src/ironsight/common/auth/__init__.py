"""Who is calling, and may they: authentication and roles for both services' APIs (server
side), and the credentials our clients send (client side)."""
