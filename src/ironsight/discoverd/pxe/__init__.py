"""discoverd's PXE side: the dnsmasq it supervises (DHCP, TFTP for plain PXE ROMs), the MAC
filter in front of it, and the iPXE script and ramdisk it serves over HTTP."""
