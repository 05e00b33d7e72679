/* placeholder: replaced by the protocol module */
int samsa_proto_placeholder(void);
int
samsa_proto_placeholder(void)
{
    return 0;
}
